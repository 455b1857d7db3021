/**
 * Binary property list (`bplist00`) writer for gw's own chat.db writer (tests, `gw demo`); pure. Lays
 * objects out as Python's plistlib does (same order, scalars written once and shared, same int, size and
 * trailer encodings), so for ints, non-integral reals, strings, bools, data, arrays and dicts its bytes
 * equal `plistlib.dumps(x, fmt=FMT_BINARY, sort_keys=False)`. Unsupported values and cycles throw.
 */

/** What the writer accepts. A number is an int when it is a safe integer (not −0), else a real. */
export type PlistInput =
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | readonly PlistInput[]
  | { readonly [key: string]: PlistInput };

const INT64_MIN = -(2n ** 63n);
const UINT64_END = 2n ** 64n;

type Flat =
  | { kind: "scalar"; bytes: Uint8Array }
  | { kind: "array"; refs: number[] }
  | { kind: "dict"; keys: number[]; values: number[] };

function bigEndian(value: bigint, size: number): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(size * 8, value);
  for (let i = 0; i < size; i++) {
    out.unshift(Number(v & 0xffn));
    v >>= 8n;
  }
  return out;
}

/** plistlib's int layout: 1, 2, 4 bytes unsigned; 8 bytes signed; 16 bytes for [2^63, 2^64). */
function intBytes(v: bigint): number[] {
  if (v < INT64_MIN || v >= UINT64_END) throw new RangeError(`plist int out of range: ${v}`);
  if (v < 0n) return [0x13, ...bigEndian(v, 8)];
  if (v < 1n << 8n) return [0x10, ...bigEndian(v, 1)];
  if (v < 1n << 16n) return [0x11, ...bigEndian(v, 2)];
  if (v < 1n << 32n) return [0x12, ...bigEndian(v, 4)];
  if (v < 1n << 63n) return [0x13, ...bigEndian(v, 8)];
  return [0x14, ...bigEndian(v, 16)];
}

/** A marker with its count: in the low nibble below 15, else 0x?F and an int. */
const sized = (marker: number, count: number): number[] =>
  count < 15 ? [marker | count] : [marker | 0x0f, ...intBytes(BigInt(count))];

function realBytes(v: number): number[] {
  const b = new Uint8Array(9);
  b[0] = 0x23;
  new DataView(b.buffer).setFloat64(1, v);
  return [...b];
}

function stringBytes(s: string): number[] {
  let ascii = true;
  for (let i = 0; i < s.length && ascii; i++) ascii = s.charCodeAt(i) < 0x80;
  if (ascii) return [...sized(0x50, s.length), ...Array.from(s, (c) => c.charCodeAt(0))];
  const out = sized(0x60, s.length);
  for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i) >> 8, s.charCodeAt(i) & 0xff);
  return out;
}

function concat(pieces: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const isInt = (v: number): boolean => Number.isSafeInteger(v) && !Object.is(v, -0);

/** The scalar's encoding and its sharing key (plistlib shares equal scalars of one type). */
function scalar(value: PlistInput): { key: string; bytes: ArrayLike<number> } | null {
  switch (typeof value) {
    case "string":
      return { key: `s${value}`, bytes: stringBytes(value) };
    case "boolean":
      return { key: `b${value}`, bytes: [value ? 0x09 : 0x08] };
    case "bigint":
      return { key: `i${value}`, bytes: intBytes(value) };
    case "number":
      if (isInt(value)) return { key: `i${value}`, bytes: intBytes(BigInt(value)) };
      return { key: `r${Object.is(value, -0) ? "-0" : value}`, bytes: realBytes(value) };
  }
  if (value instanceof Uint8Array) {
    return {
      key: `d${Buffer.from(value).toString("hex")}`,
      bytes: concat([Uint8Array.from(sized(0x40, value.length)), value]),
    };
  }
  return null;
}

function isPlainObject(value: unknown): value is { readonly [key: string]: PlistInput } {
  if (typeof value !== "object" || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Flattens `root` into plistlib's object order; returns the objects, index 0 being the root. */
function flatten(root: PlistInput): Flat[] {
  const objects: Flat[] = [];
  const scalars = new Map<string, number>();
  const containers = new Map<object, number>();
  const open = new Set<object>();
  const visit = (value: PlistInput): number => {
    const s = scalar(value);
    if (s) {
      const known = scalars.get(s.key);
      if (known !== undefined) return known;
      objects.push({ kind: "scalar", bytes: Uint8Array.from(s.bytes as ArrayLike<number>) });
      scalars.set(s.key, objects.length - 1);
      return objects.length - 1;
    }
    const isArray = Array.isArray(value);
    if (!isArray && !isPlainObject(value)) throw new TypeError(`not a plist value: ${String(value)}`);
    const obj = value as object;
    if (open.has(obj)) throw new TypeError("a plist cannot contain itself");
    const known = containers.get(obj);
    if (known !== undefined) return known;
    const index = objects.length;
    containers.set(obj, index);
    open.add(obj);
    if (isArray) {
      const entry: Flat = { kind: "array", refs: [] };
      objects.push(entry);
      for (const item of value as readonly PlistInput[]) entry.refs.push(visit(item));
    } else {
      const entry: Flat = { kind: "dict", keys: [], values: [] };
      objects.push(entry);
      const pairs = Object.entries(value as { readonly [key: string]: PlistInput });
      for (const [k] of pairs) entry.keys.push(visit(k));
      for (const [, v] of pairs) entry.values.push(visit(v));
    }
    open.delete(obj);
    return index;
  };
  visit(root);
  return objects;
}

const sizeFor = (n: number): number => (n < 2 ** 8 ? 1 : n < 2 ** 16 ? 2 : n < 2 ** 32 ? 4 : 8);

function objectBytes(o: Flat, refSize: number): Uint8Array {
  if (o.kind === "scalar") return o.bytes;
  const refs = o.kind === "array" ? o.refs : [...o.keys, ...o.values];
  const head = o.kind === "array" ? sized(0xa0, refs.length) : sized(0xd0, o.keys.length);
  return Uint8Array.from([...head, ...refs.flatMap((r) => bigEndian(BigInt(r), refSize))]);
}

/** Encodes `value` as bplist00. Dict keys keep JS property order (integer-like keys first). */
export function writeBinaryPlist(value: PlistInput): Uint8Array {
  const objects = flatten(value);
  const refSize = sizeFor(objects.length);
  const pieces: Uint8Array[] = [Uint8Array.from("bplist00", (c) => c.charCodeAt(0))];
  const offsets: number[] = [];
  let at = 8;
  for (const o of objects) {
    const b = objectBytes(o, refSize);
    offsets.push(at);
    pieces.push(b);
    at += b.length;
  }
  const offsetSize = sizeFor(at);
  pieces.push(Uint8Array.from(offsets.flatMap((off) => bigEndian(BigInt(off), offsetSize))));
  const trailer = [0, 0, 0, 0, 0, 0, offsetSize, refSize];
  trailer.push(...bigEndian(BigInt(objects.length), 8), ...bigEndian(0n, 8), ...bigEndian(BigInt(at), 8));
  pieces.push(Uint8Array.from(trailer));
  return concat(pieces);
}
