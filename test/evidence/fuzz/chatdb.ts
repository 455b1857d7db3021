/**
 * Malformed chat.db input never crashes the iMessage reader (issue 15, "Bad input tried").
 * `attributed-body`: the typedstream decoder the connector uses (decodeAttributedBody, and rowText's
 * path over it) gets every real blob of shared/fixtures/typedstream (read in place, never copied) and
 * synthetic encodings, truncated at every length (sampled lengths of blobs over 4 KiB at scale 1),
 * with random byte changes, insertions and deletions, random bytes, and hostile lengths and nesting.
 * It must never throw, return a string or null within 50 ms a blob, decode the unmodified blobs to
 * their expected text, and ignore every change after the body's closing 0x86.
 * `chat-db-rows`: rows Messages never writes, by raw SQL into a chat.db with Apple's Sequoia schema,
 * read by the real connector of a service wired as `gw serve` wires it. After each random batch a
 * good row must reach GET /messages/unread, health must say ok, every answer must be 200 with valid
 * envelopes, no bad row may carry text it does not have, and nothing may log an error or reject.
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { bodyText } from "../../../src/connectors/device-messenger/rows.ts";
import {
  decodeAttributedBody,
  encodeAttributedBody,
} from "../../../src/connectors/device-messenger/typedstream.ts";
import { CHAT_DB_SCHEMA_SQL } from "../../../src/demo/chatdb-schema.ts";
import { appleNanos } from "../../../src/demo/chatdb-writer.ts";
import { recordingLogger } from "../../helpers/logger.ts";
import { waitFor } from "../../helpers/process.ts";
import { tempDir } from "../../helpers/temp.ts";
import { AUTH, DM, deviceService, STRANGER } from "./harness.ts";
import { checkProperty, type FuzzItem, merge, type Outcome, prng } from "./types.ts";

const SHARED = join(import.meta.dir, "../../../../shared/fixtures");
const BLOB_DIR = join(SHARED, "typedstream");
const SEQUOIA_SQL = join(SHARED, "chatdb/schema-sequoia.sql");
/** A decode slower than this (its best of three timings) is a failure. */
const SLOW_MS = 50;
/** Blobs up to this size are truncated at every length even at scale 1. */
const EVERY_LENGTH_UP_TO = 4096;
const MAX_REPORTED = 25;

const utf8 = (s: string) => new TextEncoder().encode(s);
const PLACEHOLDERS = /[\uFFFC\uFFFD]/g;
const strip = (s: string) => s.replace(PLACEHOLDERS, "");

/** Collects failures, keeping the first MAX_REPORTED in full and counting the rest. */
function failureLog() {
  const list: string[] = [];
  let more = 0;
  return {
    add: (f: string) => (list.length < MAX_REPORTED ? list.push(f) : more++),
    done: () => (more > 0 ? [...list, `… and ${more} more failure(s)`] : list),
  };
}

// ---------------------------------------------------------------------------------------------------
// attributed-body

type Corpus = { name: string; bytes: Uint8Array; expected: string | null }[];

function blobCorpus(): { blobs: Corpus; real: number } {
  const blobs: Corpus = [];
  if (existsSync(BLOB_DIR)) {
    const expected = JSON.parse(readFileSync(join(BLOB_DIR, "expected.json"), "utf8")) as Record<
      string,
      string | null
    >;
    for (const name of readdirSync(BLOB_DIR).sort()) {
      if (name === "README.md" || name === "expected.json") continue;
      const bytes = new Uint8Array(readFileSync(join(BLOB_DIR, name)));
      blobs.push({ name, bytes, expected: expected[name] ?? null });
    }
  }
  const real = blobs.length;
  const texts = ["", "a", "熄灭了 ↄ 🆄 👍🏽", "\ufffcphoto", "x".repeat(300), "熄".repeat(12_000)];
  for (const text of texts)
    blobs.push({
      name: `encoded ${utf8(text).length}-byte body`,
      bytes: encodeAttributedBody(text),
      expected: text,
    });
  return { blobs, real };
}

/** Decodes `bytes` as the connector does, checking the contract; returns the result or undefined. */
function decodeChecked(
  bytes: Uint8Array,
  what: () => string,
  fail: (f: string) => void,
  max: { ms: number },
) {
  let got: string | null;
  let ms: number;
  try {
    const t0 = performance.now();
    got = decodeAttributedBody(bytes);
    ms = performance.now() - t0;
    if (ms > SLOW_MS) {
      // Retimed: a garbage-collection pause or a busy core is not the decoder being slow.
      for (let i = 0; i < 2; i++) {
        const t1 = performance.now();
        decodeAttributedBody(bytes);
        ms = Math.min(ms, performance.now() - t1);
      }
    }
    const viaRow = bodyText({ text: null, body: bytes });
    if (viaRow !== (got === null ? null : strip(got)))
      fail(`${what()}: rowText's path gave ${JSON.stringify(viaRow)}, the decoder ${JSON.stringify(got)}`);
  } catch (err) {
    fail(`${what()}: threw ${String(err)}`);
    return undefined;
  }
  max.ms = Math.max(max.ms, ms);
  if (ms > SLOW_MS) fail(`${what()}: ${ms.toFixed(1)} ms for ${bytes.length} bytes`);
  if (got !== null && typeof got !== "string") fail(`${what()}: returned ${typeof got}`);
  return got;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const HEADER = concat(Uint8Array.of(0x04, 0x0b), utf8("streamtyped"), Uint8Array.of(0x81, 0xe8, 0x03));
const ROOT = concat(Uint8Array.of(0x84, 0x01, 0x40, 0x84, 0x84, 0x84, 0x12), utf8("NSAttributedString"));
const TO_LENGTH = concat(
  Uint8Array.of(0x00, 0x84, 0x84, 0x08),
  utf8("NSObject"),
  Uint8Array.of(0x00, 0x85, 0x92, 0x84, 0x84, 0x84, 0x08),
  utf8("NSString"),
  Uint8Array.of(0x01, 0x94, 0x84, 0x01, 0x2b),
);

/** Hostile blobs and what each must decode to. */
function hostileBlobs(): { name: string; bytes: Uint8Array; expected: string | null }[] {
  const prefix = concat(HEADER, ROOT, TO_LENGTH);
  const body = utf8("hello");
  const withLength = (name: string, field: number[], expected: string | null = null) => ({
    name,
    bytes: concat(prefix, Uint8Array.from(field), body, Uint8Array.of(0x86, 0x86)),
    expected,
  });
  const mib = 1 << 20;
  const big = "熄".repeat(mib / 3);
  return [
    withLength("length 0x7f past the end", [0x7f]),
    withLength("length 81 ffff", [0x81, 0xff, 0xff]),
    withLength("length 82 ffffffff", [0x82, 0xff, 0xff, 0xff, 0xff]),
    withLength("length 82 2^31", [0x82, 0x00, 0x00, 0x00, 0x80]),
    withLength("length 82 with 5 (control)", [0x82, 0x05, 0x00, 0x00, 0x00], "hello"),
    withLength("length one short", [0x04]),
    withLength("length one long", [0x06]),
    withLength("length reaching the last byte", [0x07]),
    withLength("length reaching one past the end", [0x08]),
    withLength("length tag 83 (float)", [0x83, 0, 0, 0, 0]),
    withLength("length tag 87 (8 bytes)", [0x87, 5, 0, 0, 0, 0, 0, 0, 0]),
    withLength("length field cut off", [0x82, 0x05]),
    {
      name: "10,000 nested attributed strings",
      bytes: concat(HEADER, ...Array.from({ length: 10_000 }, () => ROOT), TO_LENGTH, Uint8Array.of(5), body),
      expected: null,
    },
    { name: "1 MiB of 0x84", bytes: concat(HEADER, new Uint8Array(mib).fill(0x84)), expected: null },
    {
      name: "1 MiB of near-miss NSStrin",
      bytes: concat(HEADER, ROOT, ...Array.from({ length: mib / 7 }, () => utf8("NSStrin"))),
      expected: null,
    },
    {
      name: "1 MiB of NSString without a type string",
      bytes: concat(HEADER, ROOT, ...Array.from({ length: mib / 8 }, () => utf8("NSString"))),
      expected: null,
    },
    { name: "1 MiB valid body (control)", bytes: encodeAttributedBody(big), expected: big },
    {
      name: "FF FE then 1 MiB of UTF-16LE",
      bytes: concat(Uint8Array.of(0xff, 0xfe), new Uint8Array(mib)),
      expected: "\0".repeat(mib / 2),
    },
    { name: "empty", bytes: new Uint8Array(0), expected: null },
    { name: "header only", bytes: HEADER, expected: null },
  ];
}

/** The smallest prefix length that decodes (decoding is monotone in the prefix length), or -1. */
function firstDecoding(bytes: Uint8Array): number {
  if (decodeAttributedBody(bytes) === null) return -1;
  let lo = 0;
  let hi = bytes.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (decodeAttributedBody(bytes.subarray(0, mid)) === null) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

type Mutation = { kind: string; at: number; apply: (b: Uint8Array) => Uint8Array };

function mutation(random: () => number, length: number): Mutation {
  const int = (n: number) => Math.floor(random() * n);
  const at = int(Math.max(1, length));
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => int(256));
  switch (int(6)) {
    case 0: {
      const v = int(256);
      return { kind: `byte ${at} = ${v}`, at, apply: (b) => b.with(at, v) };
    }
    case 1: {
      const bit = int(8);
      return { kind: `bit ${bit} of byte ${at}`, at, apply: (b) => b.with(at, (b[at] ?? 0) ^ (1 << bit)) };
    }
    case 2: {
      const ins = bytes(1 + int(8));
      return {
        kind: `insert ${ins.length} at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at), ins, b.subarray(at)),
      };
    }
    case 3: {
      const n = 1 + int(16);
      return {
        kind: `delete ${n} at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at), b.subarray(at + n)),
      };
    }
    case 4: {
      const n = 1 + int(32);
      return {
        kind: `duplicate ${n} at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at + n), b.subarray(at)),
      };
    }
    default: {
      const n = 1 + int(4);
      return {
        kind: `${n} bytes of 0xff at ${at}`,
        at,
        apply: (b) => concat(b.subarray(0, at), new Uint8Array(n).fill(0xff), b.subarray(at + n)),
      };
    }
  }
}

const attributedBody: FuzzItem = {
  id: "attributed-body",
  tried:
    "message.attributedBody blobs through the decoder the connector uses: the 41 real blobs of shared/fixtures/typedstream and 6 synthetic encodings (up to 36 KB), each truncated at every length (the two over 4 KiB at about 570 lengths at scale 1) and changed 60 times (a byte set, a bit flipped, bytes inserted, deleted or duplicated, a 0xff run), 1,000 random blobs up to 2 KiB (fast-check; bare, behind a valid header, root or length position, after FF FE), and 20 hostile blobs (length prefixes up to 2^32, float and 8-byte tags, a length field cut off, 10,000 nested roots, 1 MiB of 0x84 or of near-miss class names, a 1 MiB body)",
  held: "never throws, returns a string or null (rowText's path the same, placeholders dropped), no blob over 50 ms, unmodified blobs decode to their expected text, a prefix decodes only once it holds the body's closing 0x86 and then to the full text, changes after that byte never change the result",
  async run({ scale, seed }): Promise<Outcome> {
    const log = failureLog();
    const fail = log.add;
    const slowest = { ms: 0 };
    let cases = 0;
    const random = prng(seed);
    const { blobs, real } = blobCorpus();
    const notes: string[] = [];
    if (real === 0) notes.push(`${BLOB_DIR} not found: only the synthetic blobs were tried`);

    for (const blob of blobs) {
      const { name, bytes, expected } = blob;
      cases++;
      if (decodeChecked(bytes, () => `${name} unmodified`, fail, slowest) !== expected)
        fail(`${name}: unmodified blob does not decode to ${JSON.stringify(expected)?.slice(0, 80)}`);
      const first = firstDecoding(bytes);
      if (expected !== null && (first < 1 || bytes[first - 1] !== 0x86))
        fail(`${name}: the shortest decoding prefix (${first}) does not end at the body's closing 0x86`);

      // (a) truncations: every length, or a sample of them plus the ones around the boundary.
      const every = bytes.length <= EVERY_LENGTH_UP_TO || scale >= 100;
      const lengths = every
        ? Array.from({ length: bytes.length + 1 }, (_, n) => n)
        : [
            ...Array.from({ length: 65 }, (_, n) => n),
            ...Array.from({ length: 500 * scale }, () => Math.floor(random() * (bytes.length + 1))),
            ...[first - 2, first - 1, first, first + 1, bytes.length - 1, bytes.length],
          ].filter((n) => n >= 0 && n <= bytes.length);
      for (const n of lengths) {
        cases++;
        const got = decodeChecked(bytes.subarray(0, n), () => `${name} cut at ${n}`, fail, slowest);
        const want = first >= 0 && n >= first ? expected : null;
        if (got !== undefined && got !== want)
          fail(`${name} cut at ${n}: ${JSON.stringify(got)?.slice(0, 80)} (the body closes at ${first})`);
      }

      // (b) mutations: anything may come out, except after the body's closing byte.
      for (let i = 0; i < 60 * scale; i++) {
        const m = mutation(random, bytes.length);
        cases++;
        const got = decodeChecked(m.apply(bytes), () => `${name} with ${m.kind}`, fail, slowest);
        if (got !== undefined && first >= 0 && m.at >= first && got !== expected)
          fail(`${name} with ${m.kind} (after the closing 0x86 at ${first - 1}): ${JSON.stringify(got)}`);
      }
    }

    // (d) hostile lengths and nesting.
    for (const h of hostileBlobs()) {
      cases++;
      const got = decodeChecked(h.bytes, () => h.name, fail, slowest);
      if (got !== undefined && got !== h.expected)
        fail(
          `${h.name}: ${JSON.stringify(got)?.slice(0, 80)}, expected ${JSON.stringify(h.expected)?.slice(0, 80)}`,
        );
    }

    // (c) random bytes, bare and behind the structure the decoder looks for.
    const tail = fc.oneof(
      fc.uint8Array({ maxLength: 2048 }),
      fc.uint8Array({ maxLength: 2048, size: "max" }),
    );
    const randomBlob = fc.oneof(
      tail,
      tail.map((t) => concat(HEADER, t)),
      tail.map((t) => concat(HEADER, ROOT, t)),
      tail.map((t) => concat(HEADER, ROOT, TO_LENGTH, t)),
      tail.map((t) => concat(Uint8Array.of(0xff, 0xfe), t)),
    );
    const property = await checkProperty(
      fc.property(randomBlob, (bytes) => {
        const problems: string[] = [];
        const got = decodeChecked(
          bytes,
          () => "random blob",
          (f) => problems.push(f),
          slowest,
        );
        if (got !== undefined && decodeAttributedBody(bytes) !== got) problems.push("not deterministic");
        if (problems.length > 0) throw new Error(problems.join("; "));
      }),
      1000 * scale,
      seed,
    );
    notes.push(`slowest decode ${slowest.ms.toFixed(2)} ms`);
    return merge({ cases, failures: log.done(), notes }, property);
  },
};

// ---------------------------------------------------------------------------------------------------
// chat-db-rows

/** A value for one column: `?` bound to `v`, or a literal SQL expression. */
type Sql = { v: unknown } | { sql: string; v?: unknown };
const val = (v: unknown): Sql => ({ v });
const lit = (sql: string, v?: unknown): Sql => (v === undefined ? { sql } : { sql, v });
const sqlOf = (s: Sql): string => ("sql" in s ? s.sql : "?");
const paramsOf = (s: Sql): unknown[] => ("v" in s && s.v !== undefined ? [s.v] : "sql" in s ? [] : [s.v]);

const FRIEND_CHAT = `any;-;${DM}`;
const STRANGER_CHAT = `any;-;${STRANGER}`;
const GROUP_CHAT = "any;+;chat555000111";

type ChatChoice =
  | { k: "friend" | "stranger" | "group" | "none" | "missing" | "missing+friend" | "friend+group" }
  | { k: "garbage"; guid: Sql; style: Sql; identifier: Sql };
type HandleChoice = { k: "friend" | "stranger" | "nowhere" | "zero" | "null" } | { k: "garbage"; id: Sql };
type AttachmentChoice =
  | { k: "missing row" }
  | { k: "row"; filename: Sql | "existing" | "directory"; state: Sql; hide: Sql; mime: Sql; bytes: Sql };

interface BadRow {
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
const badRowArb: fc.Arbitrary<BadRow> = fc.record({
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

/** Prints a row spec with bytes as hex and long strings cut, for a failure message. */
const show = (x: unknown): string =>
  JSON.stringify(x, (_k, v) => {
    if (v instanceof Uint8Array) return `hex:${Buffer.from(v).toString("hex").slice(0, 80)}`;
    if (typeof v === "bigint") return `${v}n`;
    if (typeof v === "string" && v.length > 60) return `${v.slice(0, 40)}…(${v.length} chars)`;
    if (typeof v === "number" && !Number.isFinite(v)) return String(v);
    return v;
  });

/** What the connector may deliver for a row, from the row as SQLite holds it (read back by the writer). */
function textsOf(stored: { t: unknown; tt: string; b: unknown; bt: string }) {
  const text =
    stored.tt === "text"
      ? (stored.t as string)
      : stored.tt === "blob"
        ? new TextDecoder().decode(stored.t as Uint8Array)
        : stored.tt === "null"
          ? null
          : String(stored.t);
  const bodyBytes =
    stored.bt === "blob" ? (stored.b as Uint8Array) : stored.bt === "text" ? utf8(stored.b as string) : null;
  const body = bodyBytes ? decodeAttributedBody(bodyBytes) : null;
  return { text, body };
}

const FIRST_DATE_MS = -62_135_596_800_000;
const LAST_DATE_MS = 253_402_300_799_999;
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Problems with one envelope of an API answer. */
function envelopeProblem(m: Record<string, unknown>): string | null {
  const sender = m.sender as Record<string, unknown> | undefined;
  if (typeof m.id !== "string" || typeof m.text !== "string" || typeof m.channel_id !== "string")
    return `id, text or channel_id is not a string: ${show(m)}`;
  if (typeof sender?.id !== "string") return `sender.id is not a string: ${show(m)}`;
  if (typeof m.timestamp !== "string" || !RFC3339_MS.test(m.timestamp))
    return `timestamp ${show(m.timestamp)} is not YYYY-MM-DDTHH:MM:SS.mmmZ`;
  if (!Array.isArray(m.attachments)) return `attachments is not an array: ${show(m)}`;
  return null;
}

/** A chat.db with Apple's Sequoia schema (our subset when the shared fixture is absent) and three chats. */
function makeChatDb(path: string) {
  const db = new Database(path, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA busy_timeout = 5000");
  const full = existsSync(SEQUOIA_SQL);
  db.exec(full ? readFileSync(SEQUOIA_SQL, "utf8") : CHAT_DB_SCHEMA_SQL);
  const handle = (id: string) =>
    Number(db.run("INSERT INTO handle (id, service) VALUES (?, 'iMessage')", [id]).lastInsertRowid);
  const chat = (guid: string, style: number, identifier: string) =>
    Number(
      db.run(
        "INSERT INTO chat (guid, style, chat_identifier, service_name, room_name) VALUES (?, ?, ?, 'iMessage', ?)",
        [guid, style, identifier, style === 43 ? identifier : null],
      ).lastInsertRowid,
    );
  const handles = { friend: handle(DM), stranger: handle(STRANGER) };
  const chats = {
    friend: chat(FRIEND_CHAT, 45, DM),
    stranger: chat(STRANGER_CHAT, 45, STRANGER),
    group: chat(GROUP_CHAT, 43, "chat555000111"),
  };
  return { db, handles, chats, full };
}

type Written = { rowid: number; row: BadRow; visibleGuids: Set<string> };

/** Writes one bad row, with its joins and attachments, in one transaction; throws what SQLite refuses. */
function writeBadRow(
  c: ReturnType<typeof makeChatDb>,
  row: BadRow,
  ctx: { nowMs: number; dir: string; existing: string; n: number },
): Written {
  const { db } = c;
  const apple = appleNanos(ctx.nowMs);
  const date: Sql =
    row.date === "now"
      ? val(apple)
      : row.date === "future"
        ? val(apple + 86_400_000_000_000n)
        : row.date === "past"
          ? val(apple - 365n * 86_400_000_000_000n)
          : row.date === "seconds"
            ? val(apple / 1_000_000_000n)
            : row.date === "seconds float"
              ? val(Number(apple / 1_000_000_000n) + 0.25)
              : row.date === "nanoseconds float"
                ? val(Number(apple) + 0.5)
                : row.date;
  /** The ROWID of a handle or chat row with a garbage id (inserted if new); null when SQLite refuses it. */
  const garbageRow = (table: "handle" | "chat", id: Sql, more: [string, Sql][]) => {
    const cols: [string, Sql][] = [[table === "handle" ? "id" : "guid", id], ...more];
    db.run(
      `INSERT OR IGNORE INTO ${table} (${cols.map(([k]) => k).join(", ")}) VALUES (${cols.map(([, v]) => sqlOf(v)).join(", ")})`,
      cols.flatMap(([, v]) => paramsOf(v)) as never[],
    );
    const key = table === "handle" ? "id" : "guid";
    const got = db
      .query(`SELECT ROWID AS r FROM ${table} WHERE ${key} IS ${sqlOf(id)}`)
      .get(...(paramsOf(id) as never[]));
    return (got as { r: number } | null)?.r ?? null;
  };
  const h = row.handle;
  const guid = row.guid === "uuid" ? val(`BAD-${ctx.n}-${crypto.randomUUID()}`) : row.guid;
  return db.transaction((): Written => {
    const handleId =
      h.k === "garbage"
        ? garbageRow("handle", h.id, [["service", val("iMessage")]])
        : { friend: c.handles.friend, stranger: c.handles.stranger, nowhere: 987_654, zero: 0, null: null }[
            h.k
          ];
    const cols: [string, Sql][] = [
      ["guid", guid],
      ["text", row.text],
      ["attributedBody", row.body],
      ["handle_id", val(handleId)],
      ["service", val("iMessage")],
      ["date", date],
      ["is_from_me", row.isFromMe],
      ["associated_message_type", row.assocType],
      ["item_type", row.itemType],
    ];
    if (row.at !== undefined) cols.unshift(["ROWID", val(row.at)]);
    else if (row.rowid !== null) {
      const max = (db.query("SELECT MAX(ROWID) AS m FROM message").get() as { m: number | null }).m ?? 0;
      // ROWIDs stay below 2^52: the reader keeps its cursor as a JS number (see the item's notes).
      if (max + row.rowid < 2 ** 52) cols.unshift(["ROWID", val(max + row.rowid)]);
    }
    const rowid = Number(
      db.run(
        `INSERT INTO message (${cols.map(([k]) => k).join(", ")}) VALUES (${cols.map(([, s]) => sqlOf(s)).join(", ")})`,
        cols.flatMap(([, s]) => paramsOf(s)) as never[],
      ).lastInsertRowid,
    );
    const join = (chatId: number) =>
      db.run("INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (?, ?, 0)", [
        chatId,
        rowid,
      ]);
    const ch = row.chat;
    if (ch.k === "friend" || ch.k === "missing+friend" || ch.k === "friend+group") join(c.chats.friend);
    if (ch.k === "stranger") join(c.chats.stranger);
    if (ch.k === "group" || ch.k === "friend+group") join(c.chats.group);
    if (ch.k === "missing" || ch.k === "missing+friend") join(0);
    if (ch.k === "garbage") {
      const id = garbageRow("chat", ch.guid, [
        ["style", ch.style],
        ["chat_identifier", ch.identifier],
      ]);
      if (id !== null) join(id);
    }
    const visibleGuids = new Set<string>();
    for (const a of row.attachments) {
      if (a.k === "missing row") {
        db.run("INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, 888888)", [rowid]);
        continue;
      }
      const attGuid = crypto.randomUUID();
      const filename =
        a.filename === "existing"
          ? val(ctx.existing)
          : a.filename === "directory"
            ? val(ctx.dir)
            : a.filename;
      const att = db.run(
        `INSERT INTO attachment (guid, original_guid, filename, transfer_state, hide_attachment, mime_type, total_bytes, transfer_name)
         VALUES (?, ?, ${sqlOf(filename)}, ${sqlOf(a.state)}, ${sqlOf(a.hide)}, ${sqlOf(a.mime)}, ${sqlOf(a.bytes)}, 'file.jpg')`,
        [
          attGuid,
          attGuid,
          ...paramsOf(filename),
          ...paramsOf(a.state),
          ...paramsOf(a.hide),
          ...paramsOf(a.mime),
          ...paramsOf(a.bytes),
        ] as never[],
      );
      db.run("INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, ?)", [
        rowid,
        Number(att.lastInsertRowid),
      ]);
      if (!("v" in a.hide && a.hide.v === 1)) visibleGuids.add(attGuid);
    }
    return { rowid, row, visibleGuids };
  })();
}

/** SQLite's own constraints refused a row (a NULL or duplicate GUID): not a row any reader can see. */
const refusedBySqlite = (err: unknown) =>
  String((err as { code?: unknown }).code).startsWith("SQLITE_CONSTRAINT");

/** How long one round may take to show its good row (real time). */
const ROUND_DEADLINE_MS = 10_000;
/**
 * How far the service's clock moves at each look for the good row: past the 10 s wait for a chat join
 * and the 60 s wait for attachments, so rows that wait by design do not cost real time.
 */
const CLOCK_STEP_MS = 61_000;
/** The largest ROWID a JS number holds exactly, less room for the rows written after it. */
const LARGEST_ROWID = 2 ** 53 - 64;

const chatDbRows: FuzzItem = {
  id: "chat-db-rows",
  tried:
    "Random batches of 1–8 chat.db rows Messages never writes (Apple's Sequoia schema, raw SQL), each followed by one good row, read by the real iMessage connector of a service wired as gw serve wires it: text NULL/empty/only U+FFFC/lone surrogates/integers/floats/64-bit/blobs/invalid UTF-8/200 KB; attributedBody NULL, random, truncated, header + garbage, text or numbers; dates NULL, 0, negative, ±2^63, ±Inf, ±1e300, text, a blob, seconds, floats, a day ahead, a year back; handle_id 0/NULL/nowhere/garbage id; no chat join, a join to a missing chat, duplicate joins, chats with empty/blob/numeric/20,000-char guids, odd styles and identifiers; attachment joins to missing rows, NULL/blank/relative/`..`/3,000-level/NUL/blob/directory filenames, odd transfer states, hide flags, MIME types and sizes; is_from_me, associated_message_type and item_type out of range or of the wrong type; ROWID jumps up to 2^52 and a last round at 2^53 − 64",
  held: "the good row after every batch reaches GET /messages/unread (the cursor passes every bad row; waits for chat joins and attachments run on the service clock); health is ok after each batch; /messages/unread and /messages/quarantine answer 200 with string ids/texts/channels and RFC 3339 timestamps; a stored bad row's text is its text column or its decoded attributedBody (the text column first when it has visible characters), placeholders dropped; only its own visible attachment rows are re-hosted; no error logged, no unhandled rejection",
  async run({ scale, seed }): Promise<Outcome> {
    const log = failureLog();
    const fail = log.add;
    const dir = tempDir("gw-fuzz-chatdb-");
    const chatDbPath = join(dir, "Library/Messages/chat.db");
    mkdirSync(join(dir, "Library/Messages"), { recursive: true });
    const existing = join(dir, "existing.jpg");
    writeFileSync(existing, "not really a JPEG");
    const c = makeChatDb(chatDbPath);
    let offset = 0;
    const clock = { now: () => Date.now() + offset };
    const logger = recordingLogger();
    const rejections: string[] = [];
    const onRejection = (err: unknown) => void rejections.push(String(err));
    process.on("unhandledRejection", onRejection);
    // History the reader starts after (never imported), with bad rows too: the tail's newest date is the
    // backfill fence's first mark, and two of them are dated 2293 (2^63 - 1 ns) and +Inf.
    const history = [
      ...(fc.sample(badRowArb, { seed: seed + 2, numRuns: 5 * scale }) as BadRow[]),
      ...[val(2n ** 63n - 1n), lit("9e999")].map(
        (date): BadRow => ({
          ...(fc.sample(badRowArb, { seed, numRuns: 1 })[0] as BadRow),
          guid: "uuid",
          date,
        }),
      ),
    ];
    let historyRows = 0;
    for (const row of history) {
      try {
        writeBadRow(c, row, { nowMs: clock.now(), dir, existing, n: -1 - historyRows });
        historyRows++;
      } catch (err) {
        if (!refusedBySqlite(err)) throw err;
      }
    }
    const s = await deviceService({ dir, chatDbPath, clock, log: logger });
    const request = async (method: string, path: string, body?: unknown) => {
      const res = await s.svc.app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { ...AUTH, "x-agent-id": "fuzz", "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
      return { status: res.status, text: await res.text() };
    };
    const store = s.svc.store.db;
    const counts = { rows: 0, refused: 0, stored: 0, withAttachments: 0, rounds: 0 };
    let logged = 0;

    /** One batch and its good row; false when the good row never came (later rounds would only repeat it). */
    const round = async (label: string, batch: BadRow[]): Promise<boolean> => {
      counts.rounds++;
      const where = `seed ${seed}, ${label}`;
      const written: Written[] = [];
      for (const row of batch) {
        counts.rows++;
        try {
          written.push(writeBadRow(c, row, { nowMs: clock.now(), dir, existing, n: counts.rows }));
        } catch (err) {
          if (!refusedBySqlite(err)) throw err;
          counts.refused++; // not a row the reader can see
        }
      }
      const goodText = `good row after ${label} 熄灭了 👍🏽`;
      const good = c.db.run(
        "INSERT INTO message (guid, text, attributedBody, handle_id, service, date, is_from_me) VALUES (?, NULL, ?, ?, 'iMessage', ?, 0)",
        [
          `GOOD-${crypto.randomUUID()}`,
          encodeAttributedBody(goodText),
          c.handles.friend,
          appleNanos(clock.now()),
        ],
      );
      c.db.run("INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (?, ?, 0)", [
        c.chats.friend,
        Number(good.lastInsertRowid),
      ]);
      let unread: Record<string, unknown>[];
      try {
        unread = await waitFor(
          async () => {
            offset += CLOCK_STEP_MS;
            const r = await request("GET", "/messages/unread?limit=100");
            if (r.status !== 200)
              throw new Error(`GET /messages/unread answered ${r.status}: ${r.text.slice(0, 300)}`);
            const list = JSON.parse(r.text).messages as Record<string, unknown>[];
            return list.some((m) => m.text === goodText) ? list : undefined;
          },
          "the good row",
          ROUND_DEADLINE_MS,
        );
      } catch (err) {
        const errors = logger.entries.filter((e) => e.level !== "debug" && e.level !== "info").slice(-3);
        fail(
          `${where}: ${String(err)}; health ${(await request("GET", "/healthz")).text}; last log ${show(errors)}; batch ${show(batch)}`,
        );
        return false;
      }

      const health = await request("GET", "/healthz");
      const device = health.status === 200 ? JSON.parse(health.text).connectors?.device_messenger : null;
      if (device?.state !== "ok")
        fail(`${where}: /healthz ${health.status} ${health.text.slice(0, 300)}; batch ${show(batch)}`);
      const quarantine = await request("GET", "/messages/quarantine?limit=100");
      if (quarantine.status !== 200)
        fail(
          `${where}: GET /messages/quarantine answered ${quarantine.status}: ${quarantine.text.slice(0, 300)}`,
        );
      const listed = [...unread, ...(quarantine.status === 200 ? JSON.parse(quarantine.text).messages : [])];
      for (const m of listed) {
        const problem = envelopeProblem(m);
        if (problem) fail(`${where}: ${problem}`);
      }

      // Each bad row the store holds carries only what the row has.
      const stored = store
        .query(
          `SELECT id, text, typeof(text) AS tt, message_ts AS ts, typeof(channel_id) AS ct, typeof(sender_id) AS st,
             json_extract(raw, '$.ROWID') AS rowid FROM messages
           WHERE source = 'device_messenger' AND json_extract(raw, '$.ROWID') IN (SELECT value FROM json_each(?))`,
        )
        .all(JSON.stringify(written.map((w) => w.rowid))) as {
        id: string;
        text: unknown;
        tt: string;
        ts: number;
        ct: string;
        st: string;
        rowid: number;
      }[];
      for (const m of stored) {
        counts.stored++;
        const w = written.find((x) => x.rowid === m.rowid) as Written;
        const what = `${where}: ROWID ${m.rowid} ${show(w.row)}`;
        if (m.tt !== "text" || m.ct !== "text" || m.st !== "text")
          fail(`${what}: stored text/channel/sender of types ${m.tt}/${m.ct}/${m.st}`);
        if (!Number.isFinite(m.ts) || m.ts < FIRST_DATE_MS || m.ts > LAST_DATE_MS)
          fail(`${what}: stored with message_ts ${m.ts}, which no timestamp can show`);
        const has = textsOf(
          c.db
            .query(
              "SELECT text AS t, typeof(text) AS tt, attributedBody AS b, typeof(attributedBody) AS bt FROM message WHERE ROWID = ?",
            )
            .get(m.rowid) as { t: unknown; tt: string; b: unknown; bt: string },
        );
        const allowed = [has.text, has.body].filter((x): x is string => x !== null).map(strip);
        const textWins = has.text !== null && strip(has.text).trim() !== "";
        const text = String(m.text);
        if (textWins ? text !== strip(has.text as string) : !allowed.includes(text) && text.trim() !== "")
          fail(
            `${what}: delivered ${show(text)}, the row has text ${show(has.text)} and body ${show(has.body)}`,
          );
        const refs = store
          .query("SELECT platform_ref AS ref FROM attachments WHERE message_id = ?")
          .all(m.id) as {
          ref: string;
        }[];
        if (refs.length > 0) counts.withAttachments++;
        for (const { ref } of refs)
          if (!w.visibleGuids.has(ref))
            fail(`${what}: re-hosted attachment ${ref}, not one of its visible rows`);
      }
      for (const e of logger.entries.slice(logged))
        if (e.level === "error") fail(`${where}: logged error ${e.msg} ${show(e.obj)}`);
      logged = logger.entries.length;
      for (const r of rejections.splice(0)) fail(`${where}: unhandled rejection ${r}`);
      const ids = unread.map((m) => m.id);
      const marked = await request("POST", "/messages/mark_read", { message_ids: ids });
      if (marked.status !== 200) fail(`${where}: mark_read answered ${marked.status}`);
      return true;
    };

    try {
      const batches = fc.sample(fc.array(badRowArb, { minLength: 1, maxLength: 8 }), {
        seed,
        numRuns: 40 * scale,
      });
      let going = true;
      for (const [i, batch] of batches.entries()) {
        going = await round(`round ${i}`, batch);
        if (!going) break;
      }
      if (going) {
        const [last] = fc.sample(badRowArb, { seed: seed + 1, numRuns: 1 }) as BadRow[];
        await round("the last round (ROWID 2^53 - 64)", [
          { ...(last as BadRow), guid: "uuid", at: LARGEST_ROWID, chat: { k: "friend" } },
        ]);
      }
    } finally {
      process.off("unhandledRejection", onRejection);
      await s.svc.close();
      c.db.close();
      rmSync(dir, { recursive: true, force: true });
    }
    return {
      cases: counts.rows,
      failures: log.done(),
      notes: [
        `${historyRows} bad rows before the start (not imported; the fence's first mark comes from them)`,
        `${counts.rounds} batches on ${c.full ? "the Sequoia schema of shared/fixtures/chatdb" : "the writer's schema subset (shared fixture absent)"}: ${counts.rows} bad rows, ${counts.refused} refused by SQLite's own constraints (a NULL or duplicate GUID), ${counts.stored} stored (${counts.withAttachments} with a re-hosted attachment), the rest skipped as gw skips them`,
        "ROWIDs above 2^53 are not tried: the reader keeps its cursor as a JS number, so rows there would be unreachable (open)",
      ],
    };
  },
};

export const chatDbItems: FuzzItem[] = [attributedBody, chatDbRows];
