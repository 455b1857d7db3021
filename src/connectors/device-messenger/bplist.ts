/**
 * Binary property list (`bplist00`) reader; pure, never throws: anything malformed gives null. Ours, not
 * npm `bplist-parser` 0.5 (throws, wants a Buffer, keeps its limits in module state, no cycle or depth
 * guard, `dict[key] =` lets a "__proto__" key set the prototype). The object count is bounded by the
 * buffer, every offset, ref and length is checked before use; cycles and nesting past 64 give null.
 */

const HEADER = "bplist00";
const TRAILER_LENGTH = 32;
/** At most this many containers nested in one another (the top one counts); deeper gives null. */
export const PLIST_MAX_DEPTH = 64;
/** Code units per `String.fromCharCode` call, well under engines' argument limits. */
const CHUNK = 8192;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Thrown inside the reader only; `readBinaryPlist` turns it (and anything else) into null. */
class Malformed extends Error {}
const fail = (): never => {
  throw new Malformed("malformed bplist");
};

interface Layout {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  /** Objects lie in [8, end): end is the offset table's start, as CoreFoundation requires. */
  readonly end: number;
  readonly offsetSize: number;
  readonly refSize: number;
  readonly count: number;
  readonly top: number;
  /** Finished objects by index: a shared object decodes once and is shared in the result. */
  readonly done: Map<number, unknown>;
  /** Containers nested in each finished object, itself included (0 for a scalar). */
  readonly heights: Map<number, number>;
  /** Objects being decoded (the current path): meeting one again is a cycle. */
  readonly open: Set<number>;
}

/** Big-endian unsigned integer of 1–8 bytes at [at, at + size), as a safe number (else malformed). */
function readUnsigned(bytes: Uint8Array, at: number, size: number, end: number): number {
  if (size < 1 || size > 8 || at < 0 || at + size > end) fail();
  let v = 0;
  for (let i = 0; i < size; i++) {
    if (v > (Number.MAX_SAFE_INTEGER - 255) / 256) fail();
    v = v * 256 + (bytes[at + i] as number);
  }
  return v;
}

function need(l: Layout, at: number, length: number): void {
  if (length < 0 || at + length > l.end) fail();
}

/** Reads a marker's count: its low nibble, or after 0x?F the int object that follows. */
function readCount(l: Layout, at: number): { count: number; next: number } {
  const low = (l.bytes[at] as number) & 0x0f;
  if (low !== 0x0f) return { count: low, next: at + 1 };
  need(l, at + 1, 1);
  const marker = l.bytes[at + 1] as number;
  if ((marker & 0xf0) !== 0x10 || (marker & 0x0f) > 3) fail();
  const size = 1 << (marker & 0x0f);
  return { count: readUnsigned(l.bytes, at + 2, size, l.end), next: at + 2 + size };
}

const toNumberIfSafe = (v: bigint): number | bigint => (v >= -MAX_SAFE && v <= MAX_SAFE ? Number(v) : v);

function readInt(l: Layout, at: number, nibble: number): number | bigint {
  if (nibble > 4) fail();
  const size = 1 << nibble;
  need(l, at, size);
  if (size <= 4) return readUnsigned(l.bytes, at, size, l.end);
  if (size === 8) return toNumberIfSafe(l.view.getBigInt64(at));
  return toNumberIfSafe((l.view.getBigInt64(at) << 64n) | l.view.getBigUint64(at + 8));
}

/** A real of 2^nibble bytes: 4 (float32) or 8 (float64). */
function readReal(l: Layout, at: number, nibble: number): number {
  if (nibble === 2) {
    need(l, at, 4);
    return l.view.getFloat32(at);
  }
  if (nibble !== 3) fail();
  need(l, at, 8);
  return l.view.getFloat64(at);
}

function codeUnitsToString(units: ArrayLike<number>): string {
  let s = "";
  for (let i = 0; i < units.length; i += CHUNK) {
    s += String.fromCharCode(
      ...Array.from({ length: Math.min(CHUNK, units.length - i) }, (_, k) => units[i + k] as number),
    );
  }
  return s;
}

function readAscii(l: Layout, at: number, length: number): string {
  need(l, at, length);
  const slice = l.bytes.subarray(at, at + length);
  for (const b of slice) if (b > 0x7f) fail();
  return codeUnitsToString(slice);
}

function readUtf16(l: Layout, at: number, units: number): string {
  need(l, at, units * 2);
  const codes = new Uint16Array(units);
  for (let i = 0; i < units; i++) codes[i] = l.view.getUint16(at + i * 2);
  return codeUnitsToString(codes);
}

function readRefs(l: Layout, at: number, n: number): number[] {
  need(l, at, n * l.refSize);
  const refs: number[] = [];
  for (let i = 0; i < n; i++) {
    const ref = readUnsigned(l.bytes, at + i * l.refSize, l.refSize, l.end);
    if (ref >= l.count) fail();
    refs.push(ref);
  }
  return refs;
}

/** 1 + the tallest of the (finished) children. */
const heightOver = (l: Layout, refs: readonly number[]): number =>
  1 + refs.reduce((h, r) => Math.max(h, l.heights.get(r) ?? 0), 0);

function readDict(l: Layout, refs: readonly number[], depth: number): Record<string, unknown> {
  const n = refs.length / 2;
  const dict: Record<string, unknown> = {};
  for (let i = 0; i < n; i++) {
    const key = readObject(l, refs[i] as number, depth + 1);
    if (typeof key !== "string") fail();
    // defineProperty, so a "__proto__" key is an own entry, never the prototype.
    Object.defineProperty(dict, key as string, {
      value: readObject(l, refs[n + i] as number, depth + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return dict;
}

/** What `decodeScalarAt` returns for a container marker. */
const NOT_SCALAR = Symbol("not a scalar");

function decodeScalarAt(l: Layout, at: number): unknown {
  need(l, at, 1);
  const marker = l.bytes[at] as number;
  const high = marker >> 4;
  const low = marker & 0x0f;
  switch (high) {
    case 0x0:
      if (marker === 0x00 || marker === 0x0f) return null;
      if (marker === 0x08 || marker === 0x09) return marker === 0x09;
      return fail();
    case 0x1:
      return readInt(l, at + 1, low);
    case 0x2:
      return readReal(l, at + 1, low);
    case 0x3:
      return low === 3 ? readReal(l, at + 1, low) : fail();
    case 0x8:
      if (low > 7) fail();
      return { uid: readUnsigned(l.bytes, at + 1, low + 1, l.end) };
  }
  if (high !== 0x4 && high !== 0x5 && high !== 0x6) return NOT_SCALAR;
  const { count, next } = readCount(l, at);
  switch (high) {
    case 0x4:
      need(l, next, count);
      return new Uint8Array(l.bytes.subarray(next, next + count)); // a copy, plain even from a Buffer
    case 0x5:
      return readAscii(l, next, count);
    case 0x6:
      return readUtf16(l, next, count);
  }
  return NOT_SCALAR;
}

/** The object at `at` and its height; containers read their children one level deeper. */
function decodeAt(l: Layout, at: number, depth: number): [unknown, number] {
  const value = decodeScalarAt(l, at);
  if (value !== NOT_SCALAR) return [value, 0];
  const high = (l.bytes[at] as number) >> 4;
  if (high !== 0xa && high !== 0xc && high !== 0xd) fail();
  if (depth >= PLIST_MAX_DEPTH) fail();
  const { count, next } = readCount(l, at);
  const refs = readRefs(l, next, high === 0xd ? count * 2 : count);
  const container =
    high === 0xd ? readDict(l, refs, depth) : refs.map((ref) => readObject(l, ref, depth + 1));
  return [container, heightOver(l, refs)];
}

function readObject(l: Layout, ref: number, depth: number): unknown {
  if (l.done.has(ref)) {
    // A shared object read again deeper down must still fit under the depth cap.
    if (depth + (l.heights.get(ref) as number) > PLIST_MAX_DEPTH) fail();
    return l.done.get(ref);
  }
  if (l.open.has(ref)) fail();
  const at = readUnsigned(l.bytes, l.end + ref * l.offsetSize, l.offsetSize, l.bytes.length - TRAILER_LENGTH);
  if (at < HEADER.length || at >= l.end) fail();
  l.open.add(ref);
  const [value, height] = decodeAt(l, at, depth);
  l.open.delete(ref);
  l.done.set(ref, value);
  l.heights.set(ref, height);
  return value;
}

function layoutOf(bytes: Uint8Array): Layout {
  if (bytes.length < HEADER.length + 1 + 1 + TRAILER_LENGTH) fail();
  for (let i = 0; i < HEADER.length; i++) if (bytes[i] !== HEADER.charCodeAt(i)) fail();
  const trailer = bytes.length - TRAILER_LENGTH;
  const offsetSize = bytes[trailer + 6] as number;
  const refSize = bytes[trailer + 7] as number;
  if (offsetSize < 1 || offsetSize > 8 || refSize < 1 || refSize > 8) fail();
  const count = readUnsigned(bytes, trailer + 8, 8, bytes.length);
  const top = readUnsigned(bytes, trailer + 16, 8, bytes.length);
  const end = readUnsigned(bytes, trailer + 24, 8, bytes.length);
  // Every object takes at least one byte between the header and the offset table, and the table must
  // fit before the trailer: a hostile count is refused before anything is allocated for it.
  if (count < 1 || top >= count || end < HEADER.length + count) fail();
  if (end + count * offsetSize > trailer) fail();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    bytes,
    view,
    end,
    offsetSize,
    refSize,
    count,
    top,
    done: new Map(),
    heights: new Map(),
    open: new Set(),
  };
}

/**
 * Decodes a bplist00 buffer to plain values, or null when it is malformed (never throws):
 * null and fill → null; bool; int (1, 2, 4 bytes unsigned, 8 and 16 bytes signed) → number, or bigint
 * beyond ±(2^53 − 1); real (4, 8 bytes) and date (seconds since 2001-01-01 UTC) → number; data → a
 * Uint8Array copy; ASCII and UTF-16BE strings → string; UID → `{uid: number}`; array and set → array;
 * dict (string keys only, the last duplicate wins) → object. A top-level null object also gives null.
 * An object referenced twice is decoded once and the same value appears at both places (as plistlib).
 */
export function readBinaryPlist(bytes: Uint8Array): unknown {
  try {
    if (!(bytes instanceof Uint8Array)) return null;
    const l = layoutOf(bytes);
    return readObject(l, l.top, 0);
  } catch {
    return null;
  }
}
