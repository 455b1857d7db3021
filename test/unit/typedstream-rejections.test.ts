/**
 * decodeAttributedBody on input that must give null (or, where noted, still decode): wrong headers and
 * roots, a missing or misplaced NSString, every bad length tag and length, bodies without their closing
 * 86 or with invalid UTF-8, and the FF FE UTF-16LE form. Good input is in typedstream.test.ts; every
 * truncation and bit flip in typedstream-truncations.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { decodeAttributedBody } from "../../src/connectors/device-messenger/typedstream-text.ts";
import { encodeAttributedBody } from "../../src/connectors/device-messenger/typedstream-writer.ts";
import {
  bytes,
  concat,
  indexOfBytes,
  layoutOf,
  TYPE_PLUS,
  tsInt,
  utf8,
} from "../helpers/typedstream-fixtures.ts";

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

/** The 16 bytes before the root object: `streamtyped`, system version 1000, the root's type "@". */
const HEAD = concat(bytes(0x04, 0x0b), utf8("streamtyped"), bytes(0x81, 0xe8, 0x03, 0x84, 0x01, 0x40));

/** A class written for the first time: its name as a new string (ASCII), then its version. */
const newClass = (name: string, version = 0): Uint8Array =>
  concat(bytes(0x84, 0x84, name.length), utf8(name), bytes(version));

/** An object (84) of a new class whose chain of new superclasses ends in nil (85). */
const rootObject = (...chain: string[]): Uint8Array =>
  concat(bytes(0x84), ...chain.map((name) => newClass(name)), bytes(0x85));

// ---------------------------------------------------------------------------------------------------

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
      HEAD,
      rootObject("NSMutableArray", "NSArray", "NSObject"),
      bytes(0x84, 0x01, 0x69, 0x01), // "i" count 1
      bytes(0x92, 0x84), // the element: an object of a new class…
      newClass("NSAttributedString"),
      bytes(0x95), // …whose superclass is the NSObject above
      bytes(0x92, 0x84),
      newClass("NSString", 1),
      bytes(0x95, 0x84, 0x01, 0x2b, 0x05),
      utf8("hello"),
      bytes(0x86, 0x86, 0x86),
    );
    expect(indexOfBytes(blob, Array.from(utf8("NSAttributedString")))).toBeGreaterThan(64);
    expect(decodeAttributedBody(blob)).toBeNull();
  });

  test("mutable root (NSMutableString whose superclass is NSString) is accepted", () => {
    const blob = concat(
      HEAD,
      rootObject("NSMutableAttributedString", "NSAttributedString", "NSObject"),
      bytes(0x92, 0x84),
      newClass("NSMutableString", 1),
      newClass("NSString", 1),
      bytes(0x95, 0x84, 0x01, 0x2b, 0x06),
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
