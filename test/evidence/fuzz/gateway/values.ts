/**
 * Hostile values for gateway payloads (fast-check): snowflakes valid but of nothing or not snowflakes at
 * all, junk of every JSON type, hostile attachment urls/filenames/sizes. `$deep`/`$huge` markers and the
 * ABSENT/STORED_ID placeholders stay small in counterexamples; `expand` turns them into the real value.
 */
import fc from "fast-check";
import { nastyString } from "../arbitraries.ts";

export type Json = Record<string, unknown>;
const DISCORD_EPOCH = 1_420_070_400_000n;
/** Mutation values that stand for "remove the field" and "an id gw has stored". */
export const ABSENT = "$ABSENT";
export const STORED_ID = "$STORED_ID";
export const MIB = 1 << 20;

export const snowflake = (ms: number, low: number) =>
  (((BigInt(Math.floor(ms)) - DISCORD_EPOCH) << 22n) | BigInt(low & 0x3fffff)).toString();
/** A valid snowflake of nothing, 1–30 days old (never an id the fake makes later). */
export const pastSnowflake = fc
  .tuple(fc.integer({ min: 1, max: 30 * 86_400_000 }), fc.nat())
  .map(([ago, low]) => snowflake(Date.now() - 86_400_000 - ago, low));
const BAD_SNOWFLAKES = [
  "",
  "0",
  "-1",
  "01234567890123456",
  "abc",
  "1e18",
  " 1234567890123456",
  "1234567890123456 ",
  "18446744073709551616",
  "99999999999999999999999",
  "12345678901234567.5",
  "١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧",
];

/** Markers expanded when a payload is built, so that counterexamples stay short. */
const deepMarker = fc.integer({ min: 60, max: 3000 }).map((n) => ({ $deep: n }));
export const hugeMarker = fc.integer({ min: 64 * 1024, max: 2 * MIB }).map((n) => ({ $huge: n }));
export const nest = (depth: number) => `${"[".repeat(depth)}0${"]".repeat(depth)}`;
export const hugeText = (n: number) =>
  "é🙂 hostile "
    .repeat(Math.ceil(n / 12))
    .slice(0, n)
    .toWellFormed();
export function expand(v: unknown, storedId: () => string | undefined): unknown {
  if (v === STORED_ID) return storedId() ?? ABSENT;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  if ("$deep" in v) return JSON.parse(nest((v as { $deep: number }).$deep));
  if ("$huge" in v) return hugeText((v as { $huge: number }).$huge);
  return v;
}

export const junk = fc.oneof(
  fc.constant(ABSENT),
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  nastyString,
  fc.constantFrom(...BAD_SNOWFLAKES),
  pastSnowflake,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>([], {}, [null], { id: null }, "nope"),
  deepMarker,
);

export const hostileUrls = (origin: string) => [
  "file:///etc/passwd",
  `${origin}/attachments/../api/v10/users/@me`,
  `${origin}/attachments/1/2/missing.bin`,
  `${origin}/api/v10/gateway`,
  "http://127.0.0.1:1/refused",
  "javascript:alert(1)",
  "not a url",
  "",
  "http://[::1",
  "data:text/plain,hi",
];
export const FILENAMES = [
  "../../etc/passwd",
  "a\u0000b.txt",
  "x".repeat(5000),
  "",
  "CON",
  "%2e%2e%2f.png",
  "p.png",
];
export const SIZES = [-1, 0, 1, 1e20, 2 ** 53, 26 * MIB];

export function hostileAttachment(origin: string) {
  return fc.record(
    {
      id: fc.oneof(pastSnowflake, junk),
      filename: fc.oneof(fc.constantFrom(...FILENAMES), nastyString, junk),
      size: fc.oneof(fc.constantFrom<unknown>(...SIZES, "5"), junk),
      url: fc.oneof(fc.constantFrom(...hostileUrls(origin)), junk),
      proxy_url: junk,
      content_type: fc.oneof(fc.constantFrom("text/html", "", "a/b\r\nx-injected: 1", "image/png"), junk),
    },
    { requiredKeys: [] },
  );
}
