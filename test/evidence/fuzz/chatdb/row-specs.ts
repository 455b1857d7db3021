/**
 * The chat.db rows Messages never writes, as specs (`BadRow`) and their fast-check arbitrary (`badRowArb`):
 * odd text, attributedBody, date, handle, chat joins, attachments, flags and ROWID jumps. A column's value
 * is `Sql`: a bound `?` or a literal SQL expression (for what a binding cannot carry, such as 9e999).
 */
import fc from "fast-check";
import { encodeAttributedBody } from "../../../../src/connectors/device-messenger/typedstream.ts";
import { DM, STRANGER } from "../harness.ts";
import { concat, HEADER, ROOT, TO_LENGTH } from "./typedstream-bytes.ts";

/** A value for one column: `?` bound to `v`, or a literal SQL expression. */
export type Sql = { v: unknown } | { sql: string; v?: unknown };
export const val = (v: unknown): Sql => ({ v });
export const lit = (sql: string, v?: unknown): Sql => (v === undefined ? { sql } : { sql, v });
export const sqlOf = (s: Sql): string => ("sql" in s ? s.sql : "?");
export const paramsOf = (s: Sql): unknown[] =>
  "v" in s && s.v !== undefined ? [s.v] : "sql" in s ? [] : [s.v];

export const FRIEND_CHAT = `any;-;${DM}`;
export const STRANGER_CHAT = `any;-;${STRANGER}`;
export const GROUP_CHAT = "any;+;chat555000111";

export type ChatChoice =
  | { k: "friend" | "stranger" | "group" | "none" | "missing" | "missing+friend" | "friend+group" }
  | { k: "garbage"; guid: Sql; style: Sql; identifier: Sql };
export type HandleChoice =
  | { k: "friend" | "stranger" | "nowhere" | "zero" | "null" }
  | { k: "garbage"; id: Sql };
export type AttachmentChoice =
  | { k: "missing row" }
  | { k: "row"; filename: Sql | "existing" | "directory"; state: Sql; hide: Sql; mime: Sql; bytes: Sql };

export interface BadRow {
  guid: Sql | "uuid";
  /** A jump over the current MAX(ROWID) (kept below 2^52), or null for the next ROWID. */
  rowid: number | null;
  /** An exact ROWID (the last round's largest exact one). */
  at?: number;
  text: Sql;
  body: Sql;
  /** Relative kinds are nanoseconds since 2001 from the clock, or seconds (as Mac OS X 10.12 wrote). */
  date: Sql | "now" | "future" | "past" | "seconds" | "seconds float" | "nanoseconds float";
  isFromMe: Sql;
  assocType: Sql;
  itemType: Sql;
  handle: HandleChoice;
  chat: ChatChoice;
  attachments: AttachmentChoice[];
}

const bytesArb = fc.uint8Array({ maxLength: 64 });
const oddString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ maxLength: 20 }),
  fc.constantFrom("", " ", "\u0000", "\ufffc", "\ufffc\ufffd ", "NULL", "any;-;", ";+;", "../../x"),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => "x".repeat(n)),
);
const garbageText: fc.Arbitrary<Sql> = fc.oneof(
  oddString.map(val),
  bytesArb.map(val),
  fc.oneof(fc.integer(), fc.double()).map(val),
  fc.constant(val(null)),
);

const textArb: fc.Arbitrary<Sql> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 80 }).map(val) },
  { weight: 1, arbitrary: fc.constantFrom(val(null), val(""), val("\ufffc"), val(" \ufffd\ufffc ")) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 200 }).map(val) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 3 }).map((n) => val(`${"\ufffc".repeat(n)}with placeholders`)),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(fc.integer(), fc.double({ noNaN: true }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }))
      .map(val),
  },
  { weight: 1, arbitrary: bytesArb.map(val) },
  { weight: 1, arbitrary: bytesArb.map((b) => lit("CAST(? AS TEXT)", b)) },
  { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 200_000 }).map((n) => val("long ".repeat(n / 5))) },
);
const bodyArb: fc.Arbitrary<Sql> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(val(null)) },
  { weight: 3, arbitrary: fc.string({ maxLength: 60 }).map((s) => val(encodeAttributedBody(s))) },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.string({ maxLength: 60 }), fc.nat()).map(([s, n]) => {
      const blob = encodeAttributedBody(s);
      return val(blob.slice(0, n % (blob.length + 1)));
    }),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 400 }).map(val) },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 200 }).map((t) => val(concat(HEADER, ROOT, TO_LENGTH, t))),
  },
  { weight: 1, arbitrary: fc.constantFrom(val("streamtyped"), val(7), val(1.5), val(new Uint8Array(0))) },
);
const dateArb: fc.Arbitrary<BadRow["date"]> = fc.oneof(
  { weight: 10, arbitrary: fc.constant<BadRow["date"]>("now") },
  {
    weight: 3,
    arbitrary: fc.constantFrom<BadRow["date"]>(
      "future",
      "past",
      "seconds",
      "seconds float",
      "nanoseconds float",
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      val(null),
      val(0),
      val(-1),
      val(2n ** 63n - 1n),
      val(-(2n ** 63n)),
      lit("9e999"),
      lit("-9e999"),
      val(1e300),
      val(-1e300),
      val(999_999_999_999),
      val(-999_999_999_999),
      val("yesterday"),
      val("738936000000000000"),
      val(new Uint8Array([1, 2, 3])),
    ),
  },
);
const chatArb: fc.Arbitrary<ChatChoice> = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom<ChatChoice>({ k: "friend" }, { k: "stranger" }, { k: "group" }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<ChatChoice>(
      { k: "none" },
      { k: "missing" },
      { k: "missing+friend" },
      { k: "friend+group" },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("garbage" as const),
      guid: garbageText,
      style: fc.constantFrom(val(43), val(45), val(0), val(null), val("x"), val(44), val(45.5)),
      identifier: fc.oneof(garbageText, fc.constant(val(DM))),
    }),
  },
);
const handleArb: fc.Arbitrary<HandleChoice> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom<HandleChoice>({ k: "friend" }, { k: "stranger" }) },
  { weight: 1, arbitrary: fc.constantFrom<HandleChoice>({ k: "nowhere" }, { k: "zero" }, { k: "null" }) },
  { weight: 1, arbitrary: garbageText.map((id): HandleChoice => ({ k: "garbage", id })) },
);
/** Mostly `usual`, sometimes one of `odd`. */
const mostly = <T>(usual: T, ...odd: T[]) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: fc.constantFrom(...odd) });

const attachmentArb: fc.Arbitrary<AttachmentChoice> = fc.oneof(
  { weight: 1, arbitrary: fc.constant<AttachmentChoice>({ k: "missing row" }) },
  {
    weight: 6,
    arbitrary: fc.record({
      k: fc.constant("row" as const),
      filename: fc.oneof(
        { weight: 4, arbitrary: fc.constant<"existing">("existing") },
        {
          weight: 3,
          arbitrary: fc.constantFrom<Sql | "directory">(
            "directory",
            val(null),
            val(""),
            val("   "),
            val("~"),
            val("xx/yy/ABC/photo.jpg"),
            val("../../../../../../etc/hostname"),
            val("~/Library/Messages/Attachments/../../../../../etc/hostname"),
            val("~/../../../etc/passwd"),
            val(`${"a/".repeat(3000)}x.jpg`),
            val("a\u0000b.jpg"),
          ),
        },
        { weight: 1, arbitrary: bytesArb.map(val) },
      ),
      state: mostly(val(5), val(0), val(3), val(6), val(null), val("five"), val(-1), val(5.5)),
      hide: mostly(val(0), val(1), val(null), val(2)),
      mime: mostly(val("image/jpeg"), val(null), val(""), val("x".repeat(1000)), val(new Uint8Array([0xff]))),
      bytes: mostly(val(17), val(0), val(-1), val(2n ** 62n), val("many"), val(null)),
    }),
  },
);
export const badRowArb: fc.Arbitrary<BadRow> = fc.record({
  guid: fc.oneof(
    { weight: 15, arbitrary: fc.constant<"uuid">("uuid") },
    { weight: 1, arbitrary: garbageText },
  ),
  rowid: fc.oneof(
    { weight: 12, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 2 ** 36 }) },
  ),
  text: textArb,
  body: bodyArb,
  date: dateArb,
  isFromMe: fc.oneof(
    { weight: 6, arbitrary: fc.constant(val(0)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(val(1), val(2), val(-1), val(null), val("yes"), val(1.5), val("1")),
    },
  ),
  assocType: fc.oneof(
    { weight: 6, arbitrary: fc.constant(val(0)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        val(null),
        val(1000),
        val(2000),
        val(2999),
        val(3000),
        val(4000),
        val(-1),
        val(99_999),
        val("abc"),
        val(2000.5),
      ),
    },
  ),
  itemType: fc.oneof(
    { weight: 6, arbitrary: fc.constant(val(0)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        val(null),
        val(1),
        val(2),
        val(3),
        val(4),
        val(6),
        val(-1),
        val("x"),
        val(0.5),
      ),
    },
  ),
  handle: handleArb,
  chat: chatArb,
  attachments: fc.oneof(
    { weight: 3, arbitrary: fc.constant<AttachmentChoice[]>([]) },
    { weight: 2, arbitrary: fc.array(attachmentArb, { minLength: 1, maxLength: 3 }) },
  ),
});
