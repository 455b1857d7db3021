/**
 * decodeAttributedBody and encodeAttributedBody on good input: the 41 real blobs of shared/fixtures/typedstream
 * (read there at test time, never copied here), the encoder's byte layout (chatdb.md §4.2) and length forms,
 * round trips of awkward texts and sizes, and synthetic bodies inside the real Arabic blob's bytes (§4.4).
 * What must decode to null is in typedstream-rejections.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  decodeAttributedBody,
  encodeAttributedBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import {
  bytes,
  concat,
  EXPECTED,
  FIXTURE_DIR,
  FIXTURE_NAMES,
  HAVE_FIXTURES,
  indexOfBytes,
  layoutOf,
  ofUtf8Length,
  readFixture,
  TYPE_PLUS,
  tsInt,
  utf8,
} from "../helpers/typedstream-fixtures.ts";

const SIZES = [127, 128, 255, 256, 32_767, 32_768, 65_535, 65_536, 70_000];
const NAMED: Array<[string, string]> = [
  ["empty", ""],
  ["one ASCII letter", "a"],
  ["熄灭了 (UTF-8 contains 86 84)", "熄灭了"],
  ["thumbs up + skin tone", "👍🏽"],
  ["ↄ U+2184 (E2 86 84)", "ↄ"],
  ["🆄 (F0 9F 86 84)", "🆄"],
  ["Arabic with a combining mark", "مرحبا\u064b بالعالم"],
  ["C1 controls that encode as C2 86 C2 84", "\u0086\u0084"],
  ["text that spells the markers", "NSString\u0084\u0001+\u0086 streamtyped NSAttributedString \u0092\u0085"],
  ["NUL and line breaks", "a\u0000b\r\nc\u00a0d"],
  ["leading U+FEFF is kept", "\ufeffbom"],
  ["placeholders are raw text", "\ufffcphoto\ufffd"],
];

// ---------------------------------------------------------------------------------------------------

describe("real fixtures (shared/fixtures/typedstream)", () => {
  if (!HAVE_FIXTURES) {
    test("fixture folder absent: no real-blob cases generated", () => {
      expect(existsSync(FIXTURE_DIR)).toBe(false);
      console.info(`note: ${FIXTURE_DIR} not found; the 41 real-blob cases were not generated`);
    });
    return;
  }

  test("the folder holds exactly the blobs expected.json names (41)", () => {
    expect(FIXTURE_NAMES).toEqual(Object.keys(EXPECTED).sort());
    expect(FIXTURE_NAMES.length).toBe(41);
  });

  for (const name of FIXTURE_NAMES) {
    test(`${name} → ${JSON.stringify(EXPECTED[name] ?? null).slice(0, 40)}`, () => {
      expect(Object.hasOwn(EXPECTED, name)).toBe(true);
      expect(decodeAttributedBody(readFixture(name))).toBe(EXPECTED[name] as string | null);
    });
  }

  test("Node Buffer input decodes the same as a plain Uint8Array", () => {
    expect(decodeAttributedBody(readFileSync(join(FIXTURE_DIR, "LongMessage")))).toBe(
      EXPECTED.LongMessage as string,
    );
  });
});

describe("encodeAttributedBody", () => {
  test("writes the documented one-part layout (chatdb.md §4.2) for 'a'", () => {
    const expected = concat(
      bytes(0x04, 0x0b),
      utf8("streamtyped"),
      bytes(0x81, 0xe8, 0x03), // header, system version 1000
      bytes(0x84, 0x01, 0x40), // type "@"
      bytes(0x84, 0x84, 0x84, 0x12),
      utf8("NSAttributedString"),
      bytes(0x00, 0x84, 0x84, 0x08),
      utf8("NSObject"),
      bytes(0x00, 0x85), // root class chain
      bytes(0x92, 0x84, 0x84, 0x84, 0x08),
      utf8("NSString"),
      bytes(0x01, 0x94), // NSString, superclass ref NSObject
      bytes(0x84, 0x01, 0x2b, 0x01),
      utf8("a"),
      bytes(0x86), // "+", length 1, body, end
      bytes(0x84, 0x02, 0x69, 0x49, 0x01, 0x01), // run "iI": dictionary 1 covers 1 unit
      bytes(0x92, 0x84, 0x84, 0x84, 0x0c),
      utf8("NSDictionary"),
      bytes(0x00, 0x94, 0x84, 0x01, 0x69, 0x01), // NSDictionary, "i" count 1
      bytes(0x92, 0x84, 0x96, 0x96, 0x1d),
      utf8("__kIMMessagePartAttributeName"),
      bytes(0x86), // key: NSString (class ref), "+" ref
      bytes(0x92, 0x84, 0x84, 0x84, 0x08),
      utf8("NSNumber"),
      bytes(0x00, 0x84, 0x84, 0x07),
      utf8("NSValue"),
      bytes(0x00, 0x94),
      bytes(0x84, 0x01, 0x2a, 0x84, 0x99, 0x99, 0x00, 0x86), // "*" = "i", value 0, end NSNumber
      bytes(0x86, 0x86), // end dictionary, end root
    );
    expect(Array.from(encodeAttributedBody("a"))).toEqual(Array.from(expected));
  });

  test("the empty string has no attribute run (NSString then root end)", () => {
    const blob = encodeAttributedBody("");
    expect(Array.from(blob.subarray(-6))).toEqual([0x84, 0x01, 0x2b, 0x00, 0x86, 0x86]);
  });

  test("the run length counts UTF-16 units, the string length UTF-8 bytes", () => {
    const blob = encodeAttributedBody("👍🏽"); // 8 bytes, 4 units
    const { lengthAt, end } = layoutOf(blob);
    expect(blob[lengthAt]).toBe(8);
    expect(Array.from(blob.subarray(end, end + 7))).toEqual([0x86, 0x84, 0x02, 0x69, 0x49, 0x01, 0x04]);
  });

  test.each([
    [127, [0x7f]],
    [128, [0x81, 0x80, 0x00]],
    [255, [0x81, 0xff, 0x00]],
    [256, [0x81, 0x00, 0x01]],
    [32_767, [0x81, 0xff, 0x7f]],
    [32_768, [0x81, 0x00, 0x80]],
    [65_535, [0x81, 0xff, 0xff]],
    [65_536, [0x82, 0x00, 0x00, 0x01, 0x00]],
    [70_000, [0x82, 0x70, 0x11, 0x01, 0x00]],
  ])("a %d-byte body gets length field %p (and the ASCII run the same form)", (n, field) => {
    const blob = encodeAttributedBody("x".repeat(n));
    const { lengthAt, end } = layoutOf(blob);
    expect(Array.from(blob.subarray(lengthAt, lengthAt + field.length))).toEqual(field);
    expect(Array.from(blob.subarray(end + 6, end + 6 + field.length))).toEqual(field);
  });

  test("rejects lone surrogates (no UTF-8 form, cannot round-trip)", () => {
    expect(() => encodeAttributedBody("a\ud800b")).toThrow(RangeError);
    expect(() => encodeAttributedBody("\udc00")).toThrow(RangeError);
  });

  if (HAVE_FIXTURES) {
    test.each(["Arabic", "Currency", "Blank"])(
      "reproduces the real one-part blob %s byte for byte",
      (name) => {
        const real = readFixture(name);
        expect(Buffer.from(encodeAttributedBody(EXPECTED[name] as string)).equals(real)).toBe(true);
      },
    );
  }
});

describe("round-trip through our encoder", () => {
  test.each(NAMED)("%s", (_label, text) => {
    expect(decodeAttributedBody(encodeAttributedBody(text))).toBe(text);
  });

  for (const n of SIZES) {
    for (const [kind, unit] of [
      ["ASCII", "x"],
      ["熄 (E7 86 84)", "熄"],
      ["🆄 (F0 9F 86 84)", "🆄"],
    ] as const) {
      test(`${n}-byte body of ${kind}`, () => {
        const text = ofUtf8Length(n, unit);
        expect(utf8(text).length).toBe(n);
        expect(decodeAttributedBody(encodeAttributedBody(text))).toBe(text);
      });
    }
  }
});

// chatdb.md §4.4: Apple's real surrounding bytes (the Arabic blob's prefix and NSDictionary tail),
// with our length field, body and run length in between.
describe("synthetic bodies on the real Arabic layout", () => {
  if (!HAVE_FIXTURES) return; // the absent-folder case is reported by the fixture suite above

  const onArabicLayout = (text: string, form?: 0x81 | 0x82): Uint8Array => {
    const arabic = readFixture("Arabic");
    const plus = indexOfBytes(arabic, TYPE_PLUS);
    const oldLength = arabic[plus + 3] ?? 0xff;
    const bodyEnd = plus + 4 + oldLength;
    const run = [0x86, 0x84, 0x02, 0x69, 0x49, 0x01];
    // Guard the assumptions about the real file, so a changed fixture fails loudly here.
    expect(plus).toBeGreaterThan(0);
    expect(oldLength).toBeLessThan(0x80);
    expect(Array.from(arabic.subarray(bodyEnd, bodyEnd + run.length))).toEqual(run);
    expect(arabic[bodyEnd + run.length] ?? 0xff).toBeLessThan(0x80); // old run length, one byte
    const prefix = arabic.subarray(0, plus + 3);
    const tail = arabic.subarray(bodyEnd + run.length + 1);
    const body = utf8(text);
    return concat(prefix, tsInt(body.length, form), body, bytes(...run), tsInt(text.length), tail);
  };

  test("the unmodified Arabic text rebuilds the real file exactly", () => {
    expect(Buffer.from(onArabicLayout(EXPECTED.Arabic as string)).equals(readFixture("Arabic"))).toBe(true);
  });

  test.each(NAMED)("%s", (_label, text) => {
    expect(decodeAttributedBody(onArabicLayout(text))).toBe(text);
  });

  const sized: Array<[number, string, 0x81 | 0x82 | undefined]> = [
    [127, "shortest", undefined],
    [128, "shortest", undefined],
    [255, "shortest", undefined],
    [256, "shortest", undefined],
    [32_767, "shortest", undefined],
    [32_768, "81", 0x81],
    [32_768, "82", 0x82],
    [65_535, "81", 0x81],
    [65_535, "82", 0x82],
    [70_000, "shortest", undefined],
  ];
  test.each(sized)("%d-byte body of 熄 (length form %s)", (n, _label, form) => {
    const text = ofUtf8Length(n, "熄");
    const blob = onArabicLayout(text, form);
    if (form !== undefined) expect(blob[indexOfBytes(blob, TYPE_PLUS) + 3]).toBe(form);
    expect(decodeAttributedBody(blob)).toBe(text);
  });
});
