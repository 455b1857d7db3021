/**
 * fast-check generators of hostile HTTP pieces: strings that break parsers, header values, query
 * strings (encoded, raw and badly %-encoded), ids, and request bodies (arbitrary JSON, near-valid
 * bodies from the API schemas, raw text, invalid UTF-8, empty, deeply nested, over the size limit).
 */
import fc from "fast-check";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const crockford = (n: number) =>
  fc.string({ unit: fc.constantFrom(...CROCKFORD.split("")), minLength: n, maxLength: n });

export const messageId = crockford(26).map((s) => `msg_${s}`);
export const attachmentId = crockford(26).map((s) => `att_${s}`);

/** Strings that parsers and validators tend to get wrong. */
export const NASTY_STRINGS = [
  "",
  " ",
  "0",
  "-1",
  "1",
  "20",
  "50",
  "51",
  "60",
  "61",
  "100",
  "101",
  "1.5",
  "1e3",
  "0x10",
  "NaN",
  "Infinity",
  "-Infinity",
  "9".repeat(400),
  "true",
  "null",
  "undefined",
  "[]",
  "{}",
  '{"a":1}',
  "\u0000",
  "%00",
  "..",
  "../../etc/passwd",
  "%2e%2e%2f",
  "2026-01-01T00:00:00Z",
  "2026-01-01T00:00:00.123456789+05:30",
  "2026-13-01T00:00:00Z",
  "2026-02-30T00:00:00Z",
  "2026-01-01T24:00:00Z",
  "2026-01-01T00:00:00+25:00",
  "9999-12-31T23:59:59.999Z",
  "0000-01-01T00:00:00Z",
  "+275760-09-13T00:00:00.000Z",
  "device_messenger",
  "community_chat",
  "DEVICE_MESSENGER",
  "\u202e\u0645\u0631\u062d\u0628\u0627",
  "👍🏽",
  "\ud800",
  "\udfff\ud800",
  "a\u0301",
  "\u00e1",
  "\r\n",
  "<script>alert(1)</script>",
  "' OR 1=1 --",
  "{{7*7}}",
];

export const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme" }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.constantFrom(10_000, 70_000).map((n) => "x".repeat(n)) },
);

/** Percent-encodes every UTF-8 byte of `s` (lone surrogates become U+FFFD), never throwing. */
export function encodeAll(s: string): string {
  let out = "";
  for (const b of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** A query-string part: encoded, raw, or with broken %-escapes (invalid UTF-8 once decoded). */
export const queryPart = fc.oneof(
  { weight: 4, arbitrary: nastyString.map(encodeAll) },
  { weight: 1, arbitrary: fc.string().map((s) => s.replace(/[#\s]/g, "")) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("%", "%z", "%zz", "%ff", "%c3%28", "%ed%a0%80", "%e2%82", "%25", "a%00b"),
  },
);

export const QUERY_KEYS = [
  "source",
  "channel_id",
  "since",
  "limit",
  "wait",
  "before",
  "after",
  "around_message_id",
  "message_ids",
  "text",
];

export const queryString = fc
  .array(
    fc.tuple(
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...QUERY_KEYS) }, { weight: 1, arbitrary: queryPart }),
      fc.option(queryPart, { nil: undefined }),
    ),
    { maxLength: 6 },
  )
  .map((pairs) => pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join("&"));

/** A header value a client can send (no NUL, CR or LF; Latin-1 at most). */
export const headerValue = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
  },
  {
    weight: 1,
    arbitrary: fc
      .string({ unit: fc.integer({ min: 0x01, max: 0xff }).map((c) => String.fromCharCode(c)) })
      .map((s) => s.replace(/[\r\n]/g, "")),
  },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\t", "x".repeat(8_000)) },
);

/** Bytes that are not UTF-8 (overlong forms, lone continuation bytes, surrogates, truncations). */
export const invalidUtf8 = fc
  .tuple(
    fc.uint8Array({ maxLength: 64 }),
    fc.constantFrom(
      [0xff],
      [0xfe, 0xff],
      [0xc0, 0xaf],
      [0xc3, 0x28],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xf4, 0x90, 0x80, 0x80],
      [0x80],
    ),
    fc.uint8Array({ maxLength: 64 }),
  )
  .map(([a, bad, b]) => Uint8Array.from([0x7b, 0x22, ...a, ...bad, ...b, 0x22, 0x7d]));
