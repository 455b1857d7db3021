/**
 * The hostile queries of the search fuzz (search.ts): `q` built from stored words, FTS5 operators and
 * column syntax, quotes, unicode and control characters, broken %-escapes and lengths around the limit,
 * with random source, channel_id and limit (mostly valid, seldom invalid).
 */
import fc from "fast-check";
import { encodeAll } from "./arbitraries.ts";
import { DM, STRANGER } from "./harness.ts";

export const WORDS = [
  "alpha",
  "beta",
  "AND",
  "OR",
  "NOT",
  "NEAR",
  "café",
  "naïve",
  "日本語",
  "привет",
  "body",
  "tags",
  "x1",
];
const SYNTAX = ['"', "'", "*", "-", "^", ":", "(", ")", "{", "}", "+", ",", "NEAR(", "body:", "tags:", "c2B"];
const ODD = [
  "\u0000",
  "\u0007",
  "\u001b",
  "\t",
  "\n",
  "\u0301",
  "😀",
  "\ud800",
  "\u202e",
  "%",
  "&",
  "=",
  "#",
];

const token = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 3, arbitrary: fc.constantFrom(...SYNTAX) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
);

/** One or two of the stored words wrapped in syntax: queries that do find messages. */
const wrapped = fc
  .array(
    fc.tuple(
      fc.constantFrom(...SYNTAX, ...ODD, ""),
      fc.constantFrom(...WORDS),
      fc.constantFrom(...SYNTAX, ""),
    ),
    {
      minLength: 1,
      maxLength: 2,
    },
  )
  .map((ws) => [ws.map((w) => w.join("")), " "] as [string[], string]);

const q = fc
  .oneof(
    { weight: 12, arbitrary: wrapped },
    {
      weight: 8,
      arbitrary: fc.tuple(fc.array(token, { maxLength: 12 }), fc.constantFrom(" ", "", "*", ":", " OR ")),
    },
    { weight: 1, arbitrary: fc.tuple(fc.constant([] as string[]), fc.string({ maxLength: 260 })) },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constant([] as string[]),
        fc.constantFrom(
          "a".repeat(200),
          "a".repeat(201),
          "é".repeat(200),
          "😀".repeat(100),
          "b ".repeat(100),
        ),
      ),
    },
  )
  .map(([parts, joinOrWhole]) => (parts.length > 0 ? parts.join(joinOrWhole) : joinOrWhole));

/** Absent most of the time, else a valid value, seldom an invalid one (each of those is a 400). */
const sometimes = (valid: fc.Arbitrary<string>, invalid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: valid },
    { weight: 1, arbitrary: invalid },
  );

/** One query string: `q` (encoded, raw, or absent) and random filters. */
export const searchQueryString = fc
  .record({
    q: fc.oneof(
      { weight: 8, arbitrary: q.map(encodeAll) },
      { weight: 1, arbitrary: fc.constantFrom("%", "%zz", "%c3%28", "%ed%a0%80", "a%00b", "%22%2A") },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
    source: sometimes(fc.constantFrom("device_messenger", "community_chat"), fc.constantFrom("sms", "")),
    channel: sometimes(
      fc.constantFrom(DM, STRANGER, "community_chat:channel:1300000000000000042"),
      fc.string(),
    ),
    limit: sometimes(
      fc.constantFrom("1", "2", "20", "100"),
      fc.constantFrom("0", "101", "-1", "1.5", "x", ""),
    ),
  })
  .map(({ q, source, channel, limit }) =>
    [
      q === null ? null : `q=${q}`,
      source === undefined ? null : `source=${source}`,
      channel === undefined ? null : `channel_id=${encodeAll(channel)}`,
      limit === undefined ? null : `limit=${limit}`,
    ]
      .filter((p) => p !== null)
      .join("&"),
  );
