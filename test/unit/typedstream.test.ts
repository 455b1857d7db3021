import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "../../bench/lib/stats.ts";
import {
  decodeAttributedBody,
  encodeAttributedBody,
} from "../../src/connectors/device-messenger/typedstream.ts";

// Real blobs are GPL test data (see their README): read from shared/ at test time, never copied here.
const FIXTURE_DIR = join(import.meta.dir, "../../../shared/fixtures/typedstream");
const HAVE_FIXTURES = existsSync(FIXTURE_DIR);
const NOT_BLOBS = new Set(["README.md", "expected.json"]);
const FIXTURE_NAMES = HAVE_FIXTURES
  ? readdirSync(FIXTURE_DIR)
      .filter((n) => !NOT_BLOBS.has(n))
      .sort()
  : [];
const EXPECTED: Record<string, string | null> = HAVE_FIXTURES
  ? JSON.parse(readFileSync(join(FIXTURE_DIR, "expected.json"), "utf8"))
  : {};
const readFixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURE_DIR, name)));

// ---------------------------------------------------------------------------------------------------
// helpers

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const bytes = (...b: number[]): Uint8Array => Uint8Array.from(b);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function indexOfBytes(haystack: Uint8Array, needle: number[], from = 0): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/** typedstream integer; `form` forces `81`/`82` where the value allows it. */
function tsInt(n: number, form?: 0x81 | 0x82): Uint8Array {
  if (form === undefined && n < 0x80) return bytes(n);
  if (form !== 0x82 && n <= 0xffff) return bytes(0x81, n & 0xff, n >>> 8);
  return bytes(0x82, n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, n >>> 24);
}

const TYPE_PLUS = [0x84, 0x01, 0x2b];

/** Where the NSString's length field starts and the body starts/ends in a blob our encoder made. */
function layoutOf(blob: Uint8Array): { lengthAt: number; start: number; end: number } {
  const lengthAt = indexOfBytes(blob, TYPE_PLUS) + 3;
  const tag = blob[lengthAt] ?? 0;
  const size = tag < 0x80 ? 1 : tag === 0x81 ? 3 : 5;
  const field = blob.subarray(lengthAt + 1, lengthAt + size);
  const length = tag < 0x80 ? tag : field.reduce((acc, b, i) => acc + b * 2 ** (8 * i), 0);
  return { lengthAt, start: lengthAt + size, end: lengthAt + size + length };
}

/** encodeAttributedBody(text) with its NSString length field replaced by `field`. */
function withLengthField(text: string, field: Uint8Array): Uint8Array {
  const blob = encodeAttributedBody(text);
  const { lengthAt, start } = layoutOf(blob);
  return concat(blob.subarray(0, lengthAt), field, blob.subarray(start));
}

/** A well-formed blob whose body bytes are exactly `body` (possibly invalid UTF-8). */
function withBody(body: number[]): Uint8Array {
  const blob = encodeAttributedBody("x".repeat(body.length));
  blob.set(body, layoutOf(blob).start);
  return blob;
}

/** A string of exactly `n` UTF-8 bytes made of `unit` plus ASCII padding. */
function ofUtf8Length(n: number, unit: string): string {
  const unitBytes = utf8(unit).length;
  return unit.repeat(Math.floor(n / unitBytes)) + "x".repeat(n % unitBytes);
}

/** mulberry32: small deterministic PRNG for the fuzz cases (the benchmarks' seeded generator). */
const prng = mulberry32;

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

describe("rejections → null", () => {
  const good = (): Uint8Array => encodeAttributedBody("hello");

  test("control: the unmodified blob decodes", () => {
    expect(decodeAttributedBody(good())).toBe("hello");
  });

  test("empty, null, undefined and non-Uint8Array input", () => {
    expect(decodeAttributedBody(new Uint8Array(0))).toBeNull();
    expect(decodeAttributedBody(null)).toBeNull();
    expect(decodeAttributedBody(undefined)).toBeNull();
    expect(decodeAttributedBody("streamtyped" as unknown as Uint8Array)).toBeNull();
    expect(decodeAttributedBody([4, 11] as unknown as Uint8Array)).toBeNull();
  });

  test.each([
    ["version byte", 0, 0x03],
    ["signature length", 1, 0x0a],
    ["signature text", 5, 0x45],
    ["last signature letter", 12, 0x00],
  ])("wrong header: %s", (_label, at, value) => {
    const blob = good();
    blob[at] = value;
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("shorter than the 16-byte header", () => {
    expect(decodeAttributedBody(good().subarray(0, 15))).toBeNull();
  });

  test("root class that is not an attributed string", () => {
    const blob = good();
    blob[indexOfBytes(blob, Array.from(utf8("NSAttributedString"))) + 17] = 0x47; // …StrinG
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("array root holding an attributed string (name outside bytes 16–64)", () => {
    const blob = concat(
      bytes(0x04, 0x0b),
      utf8("streamtyped"),
      bytes(0x81, 0xe8, 0x03, 0x84, 0x01, 0x40),
      bytes(0x84, 0x84, 0x84, 0x0e),
      utf8("NSMutableArray"),
      bytes(0x00, 0x84, 0x84, 0x07),
      utf8("NSArray"),
      bytes(0x00, 0x84, 0x84, 0x08),
      utf8("NSObject"),
      bytes(0x00, 0x85),
      bytes(0x84, 0x01, 0x69, 0x01), // "i" count 1
      bytes(0x92, 0x84, 0x84, 0x84, 0x12),
      utf8("NSAttributedString"),
      bytes(0x00, 0x95),
      bytes(0x92, 0x84, 0x84, 0x84, 0x08),
      utf8("NSString"),
      bytes(0x01, 0x95, 0x84, 0x01, 0x2b, 0x05),
      utf8("hello"),
      bytes(0x86, 0x86, 0x86),
    );
    expect(indexOfBytes(blob, Array.from(utf8("NSAttributedString")))).toBeGreaterThan(64);
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("mutable root (NSMutableString whose superclass is NSString) is accepted", () => {
    const blob = concat(
      bytes(0x04, 0x0b),
      utf8("streamtyped"),
      bytes(0x81, 0xe8, 0x03, 0x84, 0x01, 0x40),
      bytes(0x84, 0x84, 0x84, 0x19),
      utf8("NSMutableAttributedString"),
      bytes(0x00, 0x84, 0x84, 0x12),
      utf8("NSAttributedString"),
      bytes(0x00, 0x84, 0x84, 0x08),
      utf8("NSObject"),
      bytes(0x00, 0x85),
      bytes(0x92, 0x84, 0x84, 0x84, 0x0f),
      utf8("NSMutableString"),
      bytes(0x01, 0x84, 0x84, 0x08),
      utf8("NSString"),
      bytes(0x01, 0x95, 0x84, 0x01, 0x2b, 0x06),
      utf8("熄灭"),
      bytes(0x86, 0x86),
    );
    expect(decodeAttributedBody(blob)).toBe("熄灭");
  });

  test("no NSString class name after the root", () => {
    const blob = good();
    blob[indexOfBytes(blob, Array.from(utf8("NSString"))) + 7] = 0x47; // NSStrinG
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("no `84 01 2B` type string", () => {
    const blob = good();
    blob[indexOfBytes(blob, TYPE_PLUS) + 2] = 0x2a;
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("`84 01 2B` only within the ~12 bytes after NSString", () => {
    const blob = good();
    const plus = indexOfBytes(blob, TYPE_PLUS);
    const padded = (n: number) => concat(blob.subarray(0, plus), new Uint8Array(n), blob.subarray(plus));
    expect(decodeAttributedBody(padded(7))).toBe("hello"); // marker ends 12 bytes after the name
    expect(decodeAttributedBody(padded(8))).toBeNull();
    expect(decodeAttributedBody(padded(40))).toBeNull();
  });

  test.each([0x80, 0x83, 0x84, 0x85, 0x86, 0x87, 0x92, 0xff].map((tag) => [tag.toString(16), tag]))(
    "length tag 0x%s",
    (_hex, tag) => {
      expect(decodeAttributedBody(withLengthField("hello", bytes(tag)))).toBeNull();
    },
  );

  test("both 0x81 and 0x82 length forms are read (control for the tag cases)", () => {
    expect(decodeAttributedBody(withLengthField("hello", tsInt(5, 0x81)))).toBe("hello");
    expect(decodeAttributedBody(withLengthField("hello", tsInt(5, 0x82)))).toBe("hello");
  });

  test.each([
    ["one byte", bytes(0x7f)],
    ["u16", tsInt(0xffff, 0x81)],
    ["u32", tsInt(0xffffffff, 0x82)],
  ])("length past the end (%s)", (_label, field) => {
    expect(decodeAttributedBody(withLengthField("hello", field))).toBeNull();
  });

  test("length field cut off by the end of the blob", () => {
    const blob = withLengthField("hello", tsInt(5, 0x82));
    const lengthAt = indexOfBytes(blob, TYPE_PLUS) + 3;
    for (let cut = lengthAt; cut < lengthAt + 5; cut++) {
      expect(decodeAttributedBody(blob.subarray(0, cut))).toBeNull();
    }
  });

  test("body ending exactly at the end of the blob (no room for 86)", () => {
    const blob = good();
    const { end } = layoutOf(blob);
    expect(decodeAttributedBody(blob.subarray(0, end))).toBeNull();
    expect(decodeAttributedBody(blob.subarray(0, end + 1))).toBe("hello");
  });

  test("no 86 right after the body", () => {
    const blob = good();
    blob[layoutOf(blob).end] = 0x85;
    expect(decodeAttributedBody(blob)).toBeNull();
    expect(decodeAttributedBody(withLengthField("hello", bytes(4)))).toBeNull();
    expect(decodeAttributedBody(withLengthField("hello", bytes(6)))).toBeNull();
  });

  test("declared length longer than the text before the next object (the ExtraData shape)", () => {
    // 157 bytes declared, 17 present, then `86 84 02 69 49…`: a marker scanner would return the 17.
    const blob = withLengthField("This is parsing  ", tsInt(157));
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("control: a valid 3-byte sequence in the body decodes", () => {
    expect(decodeAttributedBody(withBody([0xe7, 0x86, 0x84]))).toBe("熄");
  });

  test.each([
    ["0xFF", [0x61, 0xff, 0x62]],
    ["lone continuation byte", [0x80]],
    ["overlong NUL", [0xc0, 0x80]],
    ["encoded surrogate", [0xed, 0xa0, 0x80]],
    ["truncated sequence", [0xe7, 0x86, 0x61]],
    ["above U+10FFFF", [0xf4, 0x90, 0x80, 0x80]],
  ])("invalid UTF-8 in the body: %s", (_label, body) => {
    expect(decodeAttributedBody(withBody(body))).toBeNull();
  });
});

describe("FF FE: raw UTF-16LE text", () => {
  const utf16le = (s: string): Uint8Array =>
    concat(bytes(0xff, 0xfe), new Uint8Array(Buffer.from(s, "utf16le")));

  test("decodes the text after the byte-order mark", () => {
    expect(decodeAttributedBody(utf16le("héllo 👍🏽 熄"))).toBe("héllo 👍🏽 熄");
    expect(decodeAttributedBody(bytes(0xff, 0xfe))).toBe("");
  });

  test("malformed UTF-16 → null", () => {
    expect(decodeAttributedBody(concat(utf16le("ab"), bytes(0x63)))).toBeNull(); // odd byte count
    expect(decodeAttributedBody(bytes(0xff, 0xfe, 0x00, 0xd8, 0x61, 0x00))).toBeNull(); // lone surrogate
  });

  test("a lone FF or FE FF is not the UTF-16LE form", () => {
    expect(decodeAttributedBody(bytes(0xff))).toBeNull();
    expect(decodeAttributedBody(bytes(0xfe, 0xff, 0x61, 0x00))).toBeNull();
  });
});

describe("fuzz: truncations and bit flips never throw", () => {
  const cases: Array<[string, () => Uint8Array, string | null]> = [
    ...FIXTURE_NAMES.map((name): [string, () => Uint8Array, string | null] => [
      `fixture ${name}`,
      () => readFixture(name),
      EXPECTED[name] ?? null,
    ]),
    ...["", "熄灭了 ↄ 🆄 👍🏽", "x".repeat(300), ofUtf8Length(32_768, "熄"), ofUtf8Length(70_000, "🆄")].map(
      (text): [string, () => Uint8Array, string | null] => [
        `encoded ${utf8(text).length}-byte body`,
        () => encodeAttributedBody(text),
        text,
      ],
    ),
  ];

  for (const [label, load, expected] of cases) {
    test(label, () => {
      const blob = load();
      expect(decodeAttributedBody(blob)).toBe(expected);

      // Every prefix: null until the body's closing 86 is included, then the full text.
      let firstDecoded = -1;
      for (let n = 0; n <= blob.length; n++) {
        const got = decodeAttributedBody(blob.subarray(0, n));
        if (firstDecoded < 0 && got !== null) firstDecoded = n;
        if (firstDecoded < 0) expect(got).toBeNull();
        else if (got !== expected) expect(got).toBe(expected);
      }
      if (expected !== null) expect(blob[firstDecoded - 1]).toBe(0x86);
      else expect(firstDecoded).toBe(-1);

      // Single-bit flips: a string or null; after the body's closing 86 they cannot matter.
      const random = prng(blob.length * 2654435761);
      for (let i = 0; i < 200; i++) {
        const at = Math.floor(random() * blob.length);
        const mutated = blob.slice();
        mutated[at] = (mutated[at] ?? 0) ^ (1 << Math.floor(random() * 8));
        const got = decodeAttributedBody(mutated);
        if (got !== null && typeof got !== "string") expect(typeof got).toBe("string");
        if (expected !== null && at >= firstDecoded && got !== expected) expect(got).toBe(expected);
      }
    });
  }
});
