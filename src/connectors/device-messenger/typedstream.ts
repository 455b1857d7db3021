/**
 * `message.attributedBody` (typedstream) text codec; pure, no I/O (chatdb.md §4). `decodeAttributedBody`
 * returns the root attributed string's text by the length-driven algorithm of §4.3, or null ("no text")
 * for anything else, and never throws or scans for end markers. `encodeAttributedBody` writes the
 * one-part layout Messages stores (§4.2): decode(encode(s)) === s for every well-formed string.
 */

const HEADER_LENGTH = 16;
/** Step 2: the root class name must lie within bytes [16, 64) of the blob. */
const ROOT_WINDOW_END = 64;
/** Step 4: `84 01 2B` must lie within this many bytes after the `NSString` class name. */
const TYPE_WINDOW = 12;

const TAG_INT16 = 0x81;
const TAG_INT32 = 0x82;
const TAG_NEW = 0x84;
const TAG_NIL = 0x85;
const TAG_END = 0x86;
const FIRST_REFERENCE = 0x92;

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

const STREAMTYPED = ascii("streamtyped");
const ROOT_NAMES = [ascii("NSAttributedString"), ascii("NSMutableAttributedString")];
const NSSTRING = ascii("NSString");
const TYPE_PLUS = Uint8Array.of(TAG_NEW, 0x01, 0x2b);

// ignoreBOM: a leading U+FEFF is part of the text ("raw, no clean-up"), not a byte-order mark to drop.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const UTF16LE = new TextDecoder("utf-16le", { fatal: true, ignoreBOM: true });

function matchesAt(blob: Uint8Array, at: number, pattern: Uint8Array): boolean {
  if (at < 0 || at + pattern.length > blob.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    if (blob[at + i] !== pattern[i]) return false;
  }
  return true;
}

/** First offset in [from, to - pattern.length] where `pattern` occurs, or -1. */
function indexOf(blob: Uint8Array, pattern: Uint8Array, from: number, to: number): number {
  const last = Math.min(to, blob.length) - pattern.length;
  for (let at = from; at <= last; at++) {
    if (matchesAt(blob, at, pattern)) return at;
  }
  return -1;
}

/** Offset just past the earliest root class name inside the window, or -1. */
function rootNameEnd(blob: Uint8Array): number {
  for (let at = HEADER_LENGTH; at < ROOT_WINDOW_END; at++) {
    for (const name of ROOT_NAMES) {
      if (at + name.length <= ROOT_WINDOW_END && matchesAt(blob, at, name)) return at + name.length;
    }
  }
  return -1;
}

function decodeStrict(decoder: TextDecoder, bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** The text of a `message.attributedBody` blob, or null when it holds no decodable plain text. */
export function decodeAttributedBody(blob: Uint8Array | null | undefined): string | null {
  if (!(blob instanceof Uint8Array)) return null;
  const byte = (i: number): number => blob[i] ?? 0;

  // Rarity: raw UTF-16LE text behind a byte-order mark instead of a typedstream.
  if (blob.length >= 2 && blob[0] === 0xff && blob[1] === 0xfe)
    return decodeStrict(UTF16LE, blob.subarray(2));

  // 1. Header: 04, 0B "streamtyped" (the system version follows; not checked).
  if (
    blob.length < HEADER_LENGTH ||
    blob[0] !== 0x04 ||
    blob[1] !== 0x0b ||
    !matchesAt(blob, 2, STREAMTYPED)
  ) {
    return null;
  }
  // 2. Root class: an (immutable or mutable) attributed string, anything else is not a body.
  const rootEnd = rootNameEnd(blob);
  if (rootEnd < 0) return null;
  // 3. Text object: the first `NSString` after the root name (class, or NSMutableString's superclass).
  const nsString = indexOf(blob, NSSTRING, rootEnd, blob.length);
  if (nsString < 0) return null;
  // 4. Type string "+" shortly after (class version and superclass reference sit in between).
  const afterName = nsString + NSSTRING.length;
  const typePlus = indexOf(blob, TYPE_PLUS, afterName, afterName + TYPE_WINDOW);
  if (typePlus < 0) return null;
  // 5. Length in UTF-8 bytes, as a typedstream integer.
  const tagAt = typePlus + TYPE_PLUS.length;
  if (tagAt >= blob.length) return null;
  const tag = byte(tagAt);
  let length: number;
  let start: number;
  if (tag < 0x80) {
    length = tag;
    start = tagAt + 1;
  } else if (tag === TAG_INT16) {
    start = tagAt + 3;
    if (start > blob.length) return null;
    length = byte(tagAt + 1) | (byte(tagAt + 2) << 8);
  } else if (tag === TAG_INT32) {
    start = tagAt + 5;
    if (start > blob.length) return null;
    length =
      (byte(tagAt + 1) | (byte(tagAt + 2) << 8) | (byte(tagAt + 3) << 16) | (byte(tagAt + 4) << 24)) >>> 0;
  } else {
    return null;
  }
  // 6. Bounds: the length is authoritative, and the NSString must end right there.
  const end = start + length;
  if (!(end < blob.length) || blob[end] !== TAG_END) return null;
  // 7. Strict UTF-8.
  return decodeStrict(UTF8, blob.subarray(start, end));
}

/** Minimal typedstream writer with the shared string and object tables that references point into. */
class TypedStreamWriter {
  private readonly parts: Uint8Array[] = [];
  private readonly strings: string[] = [];
  private readonly classes = new Map<string, number>();
  private objectCount = 0;

  raw(...bytes: number[]): void {
    this.parts.push(Uint8Array.from(bytes));
  }

  /** < 0x80: one byte; else `81` + u16 LE up to 0xFFFF; else `82` + u32 LE. Non-negative only. */
  int(value: number): void {
    if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
      throw new RangeError(`typedstream integer out of range: ${value}`);
    }
    if (value < 0x80) this.raw(value);
    else if (value <= 0xffff) this.raw(TAG_INT16, value & 0xff, value >>> 8);
    else this.raw(TAG_INT32, value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24);
  }

  /** Length-prefixed bytes with no table entry (the header string, `+` values). */
  bytes(data: Uint8Array): void {
    this.int(data.length);
    this.parts.push(data);
  }

  /** A shared string (type encodings, class names): new `84` + bytes the first time, then a reference. */
  sharedString(value: string): void {
    const index = this.strings.indexOf(value);
    if (index >= 0) {
      this.reference(index);
      return;
    }
    this.strings.push(value);
    this.raw(TAG_NEW);
    this.bytes(ascii(value));
  }

  /** A C string (`*` value): `84` followed by a shared string. */
  cString(value: string): void {
    this.raw(TAG_NEW);
    this.sharedString(value);
  }

  /** New object of the class chain `[name, version]…` (most derived first); classes seen before are referenced. */
  beginObject(chain: ReadonlyArray<readonly [string, number]>): void {
    this.raw(TAG_NEW);
    this.objectCount++;
    for (const [name, version] of chain) {
      const known = this.classes.get(name);
      if (known !== undefined) {
        this.reference(known);
        return;
      }
      this.raw(TAG_NEW);
      this.classes.set(name, this.objectCount++);
      this.sharedString(name);
      this.int(version);
    }
    this.raw(TAG_NIL);
  }

  endObject(): void {
    this.raw(TAG_END);
  }

  finish(): Uint8Array {
    const total = this.parts.reduce((sum, part) => sum + part.length, 0);
    const out = new Uint8Array(total);
    let at = 0;
    for (const part of this.parts) {
      out.set(part, at);
      at += part.length;
    }
    return out;
  }

  private reference(index: number): void {
    const tag = FIRST_REFERENCE + index;
    if (tag > 0xff) throw new RangeError("typedstream reference table overflow");
    this.raw(tag);
  }
}

const NS_OBJECT = ["NSObject", 0] as const;
const NS_STRING = [["NSString", 1], NS_OBJECT] as const;

/**
 * A synthetic `attributedBody` for `text` in the layout Messages writes for a plain one-part message:
 * an NSAttributedString whose NSString holds the UTF-8 text, one attribute run covering all UTF-16 units
 * with `{ __kIMMessagePartAttributeName: 0 }` (no run and no dictionary for ""). Throws RangeError for
 * a string with lone surrogates, which has no UTF-8 form and so could not round-trip.
 */
export function encodeAttributedBody(text: string): Uint8Array {
  if (!text.isWellFormed()) throw new RangeError("text contains lone surrogates");
  const w = new TypedStreamWriter();
  // Header: streamer version 4, signature, system version 1000 (`81 E8 03`).
  w.int(4);
  w.bytes(ascii("streamtyped"));
  w.int(1000);

  w.sharedString("@");
  w.beginObject([["NSAttributedString", 0], NS_OBJECT]);
  w.sharedString("@");
  w.beginObject(NS_STRING);
  w.sharedString("+");
  w.bytes(new TextEncoder().encode(text));
  w.endObject();

  if (text !== "") {
    // Attribute run: dictionary 1 covers `text.length` UTF-16 units.
    w.sharedString("iI");
    w.int(1);
    w.int(text.length);
    w.sharedString("@");
    w.beginObject([["NSDictionary", 0], NS_OBJECT]);
    w.sharedString("i");
    w.int(1); // entry count
    w.sharedString("@");
    w.beginObject(NS_STRING);
    w.sharedString("+");
    w.bytes(ascii("__kIMMessagePartAttributeName"));
    w.endObject();
    w.sharedString("@");
    w.beginObject([["NSNumber", 0], ["NSValue", 0], NS_OBJECT]);
    w.sharedString("*");
    w.cString("i"); // NSValue's objCType
    w.sharedString("i");
    w.int(0); // message part 0
    w.endObject(); // NSNumber
    w.endObject(); // NSDictionary
  }
  w.endObject(); // root
  return w.finish();
}
