/**
 * The text of a `message.attributedBody` (chatdb.md §4.3): the root attributed string's NSString by the
 * length-driven algorithm, or null ("no text") for anything else. Pure; never throws, never scans for end
 * markers. `decodeBody` (typedstream-body.ts) takes its text from here, so both always agree.
 */

import { SIGNATURE, TAG_END, TAG_INT16, TAG_INT32, TAG_NEW } from "./typedstream-tags.ts";

const HEADER_LENGTH = 16;
/** Step 2: the root class name must lie within bytes [16, 64) of the blob. */
const ROOT_WINDOW_END = 64;
/** Step 4: `84 01 2B` must lie within this many bytes after the `NSString` class name. */
const TYPE_WINDOW = 12;

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

const STREAMTYPED = ascii(SIGNATURE);
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
