/**
 * A generic typedstream (NSArchiver, little-endian) reader: header, then the root's typed groups into a
 * small object graph, with the shared string table and the object table (objects, classes, C strings) that
 * back-references (0x92 and up, chatdb.md §4.2) point into. Pure; `readTypedStream` never throws (null on
 * any malformation); work is bounded by the blob length and nesting by MAX_DEPTH, so it cannot loop.
 */

import {
  FIRST_TAG,
  LAST_TAG,
  REFERENCE_BIAS,
  SIGNATURE,
  TAG_END,
  TAG_FLOAT,
  TAG_INT16,
  TAG_INT32,
  TAG_INT64,
  TAG_NEW,
  TAG_NIL,
} from "./typedstream-tags.ts";

export interface ArchivedClass {
  readonly kind: "class";
  readonly name: string;
  readonly version: number;
  superclass: ArchivedClass | null;
}

/** An object with every value of its typed groups in stream order (the groups themselves are not kept). */
export interface ArchivedObject {
  readonly kind: "object";
  cls: ArchivedClass | null;
  readonly values: Value[];
}

/** Integers and floats are numbers, `+` strings and `[Nc]` arrays bytes, C strings/atoms strings. */
export type Value = number | string | Uint8Array | ArchivedObject | ArchivedClass | null | Value[];

const MAX_DEPTH = 48;
const MAX_ARRAY_DIGITS = 9;
const INTEGER_TYPES = "sSiIlLqQ";
const SIMPLE_TYPES = "cCBsSiIlLqQfd*%:+#@!";

class Malformed extends Error {}

const fail = (): never => {
  throw new Malformed();
};

/** Splits a type encoding ("iI", "{_NSRange=QQ}", "[820c]") into one encoding per value, or fails. */
function splitEncodings(encoding: string): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < encoding.length) {
    const end = encodingEnd(encoding, at);
    out.push(encoding.slice(at, end));
    at = end;
  }
  return out;
}

/** Offset just past the single encoding starting at `at`. */
function encodingEnd(encoding: string, at: number): number {
  const c = encoding[at] ?? "";
  if (SIMPLE_TYPES.includes(c)) return at + 1;
  const close = c === "[" ? "]" : c === "{" ? "}" : fail();
  let level = 0;
  for (let i = at; i < encoding.length; i++) {
    if (encoding[i] === "[" || encoding[i] === "{") level++;
    else if (encoding[i] === "]" || encoding[i] === "}") level--;
    if (level > MAX_DEPTH) fail();
    if (level === 0) return encoding[i] === close ? i + 1 : fail();
  }
  return fail();
}

class Reader {
  private pos = 0;
  private steps = 0;
  private depth = 0;
  private readonly maxSteps: number;
  /** Shared strings, decoded once (Latin-1) so that a reference costs O(1) however long the string. */
  private readonly strings: string[] = [];
  private readonly objects: Array<ArchivedObject | ArchivedClass | string> = [];
  private readonly encodings = new Map<number, string[]>();

  constructor(private readonly blob: Uint8Array) {
    this.maxSteps = 4 * blob.length + 1024;
  }

  root(): ArchivedObject {
    const version = this.integer(this.byte(), false);
    if (version !== 3 && version !== 4) fail();
    const signature = this.unsharedString(this.byte());
    if (signature === null || latin1(signature) !== SIGNATURE) fail();
    this.integer(this.byte(), false); // system version
    const values: Value[] = [];
    this.group(this.byte(), values);
    const root = values[0];
    return values.length === 1 && isObject(root) ? root : fail();
  }

  private byte(): number {
    const b = this.blob[this.pos];
    if (b === undefined) fail();
    this.pos++;
    return b as number;
  }

  private take(n: number): Uint8Array {
    if (!(n >= 0 && this.pos + n <= this.blob.length)) fail();
    const out = this.blob.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** Counts work: one per value, plus the length of every encoding parsed while reading. */
  private tick(cost = 1): void {
    this.steps += cost;
    if (this.steps > this.maxSteps) fail();
  }

  private view(n: number): DataView {
    const bytes = this.take(n);
    return new DataView(bytes.buffer, bytes.byteOffset, n);
  }

  /** A byte below 0x80 (or 0x92+, signed when asked) is its own value; 81/82/87 prefix 2/4/8 bytes. */
  private integer(head: number, signed: boolean): number {
    if (head === TAG_INT16) {
      const v = this.view(2);
      return signed ? v.getInt16(0, true) : v.getUint16(0, true);
    }
    if (head === TAG_INT32) {
      const v = this.view(4);
      return signed ? v.getInt32(0, true) : v.getUint32(0, true);
    }
    if (head === TAG_INT64) {
      const v = this.view(8);
      return Number(signed ? v.getBigInt64(0, true) : v.getBigUint64(0, true));
    }
    if (head >= FIRST_TAG && head <= LAST_TAG) fail();
    return signed && head > 0x7f ? head - 0x100 : head;
  }

  private float(head: number, bytes: 4 | 8): number {
    if (head !== TAG_FLOAT) return this.integer(head, true);
    const v = this.view(bytes);
    return bytes === 4 ? v.getFloat32(0, true) : v.getFloat64(0, true);
  }

  private reference(head: number): number {
    const index = this.integer(head, true) - REFERENCE_BIAS;
    return index >= 0 ? index : fail();
  }

  private unsharedString(head: number): Uint8Array | null {
    if (head === TAG_NIL) return null;
    return this.take(this.integer(head, false));
  }

  /** A shared string and its table index (new `84` + unshared string, or a reference). */
  private sharedString(head: number): [string, number] | null {
    if (head === TAG_NIL) return null;
    if (head === TAG_NEW) {
      const value = latin1(this.unsharedString(this.byte()) ?? fail());
      this.strings.push(value);
      return [value, this.strings.length - 1];
    }
    const index = this.reference(head);
    const value = this.strings[index] ?? fail();
    return [value, index];
  }

  private cString(head: number): string | null {
    if (head === TAG_NIL) return null;
    if (head === TAG_NEW) {
      const [value] = this.sharedString(this.byte()) ?? fail();
      this.objects.push(value);
      return value;
    }
    const entry = this.objects[this.reference(head)];
    return typeof entry === "string" ? entry : fail();
  }

  /** A class chain: new classes (name, version) until nil or a reference to a known class. */
  private classChain(head: number): ArchivedClass | null {
    let first: ArchivedClass | null = null;
    let last: ArchivedClass | null = null;
    while (head === TAG_NEW) {
      this.tick();
      const [name] = this.sharedString(this.byte()) ?? fail();
      const version = this.integer(this.byte(), true);
      const cls: ArchivedClass = { kind: "class", name, version, superclass: null };
      this.objects.push(cls);
      if (last === null) first = cls;
      else last.superclass = cls;
      last = cls;
      head = this.byte();
    }
    let tail: ArchivedClass | null = null;
    if (head !== TAG_NIL) {
      const entry = this.objects[this.reference(head)];
      tail = isClass(entry) ? entry : fail();
    }
    if (last === null) return tail;
    last.superclass = tail;
    return first;
  }

  private object(head: number): ArchivedObject | null {
    if (head === TAG_NIL) return null;
    if (head !== TAG_NEW) {
      const entry = this.objects[this.reference(head)];
      return isObject(entry) ? entry : fail();
    }
    const node: ArchivedObject = { kind: "object", cls: null, values: [] };
    this.objects.push(node);
    node.cls = this.classChain(this.byte());
    this.enter();
    for (let h = this.byte(); h !== TAG_END; h = this.byte()) this.group(h, node.values);
    this.depth--;
    return node;
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) fail();
  }

  /** One typed group: a type encoding string, then one value per encoding in it. */
  private group(head: number, out: Value[]): void {
    const [encoding, index] = this.sharedString(head) ?? fail();
    let encodings = this.encodings.get(index);
    if (encodings === undefined) {
      this.tick(encoding.length);
      encodings = splitEncodings(encoding);
      if (encodings.length === 0) fail();
      this.encodings.set(index, encodings);
    }
    for (const encoding of encodings) out.push(this.value(encoding));
  }

  private value(encoding: string): Value {
    this.tick();
    const c = encoding[0] ?? fail();
    if (c === "c") return (this.byte() << 24) >> 24; // chars and booleans are raw bytes, no tags
    if (c === "C" || c === "B") return this.byte();
    if (INTEGER_TYPES.includes(c)) return this.integer(this.byte(), c === c.toLowerCase());
    if (c === "f" || c === "d") return this.float(this.byte(), c === "f" ? 4 : 8);
    if (c === "*") return this.cString(this.byte());
    if (c === "%" || c === ":") return this.sharedString(this.byte())?.[0] ?? null;
    if (c === "+") return this.unsharedString(this.byte());
    if (c === "#") return this.classChain(this.byte());
    if (c === "@") return this.object(this.byte());
    if (c === "!") return null;
    if (c === "[") return this.array(encoding);
    if (c === "{") return this.struct(encoding);
    return fail();
  }

  private array(encoding: string): Value {
    this.tick(encoding.length);
    const match = /^\[(\d+)(.*)\]$/s.exec(encoding) ?? fail();
    const digits = match[1] ?? "";
    if (digits.length > MAX_ARRAY_DIGITS) fail();
    const length = Number(digits);
    const element = match[2] ?? "";
    if (element === "c" || element === "C") return this.take(length);
    if (splitEncodings(element).length !== 1) fail();
    this.enter();
    const out: Value[] = [];
    for (let i = 0; i < length; i++) out.push(this.value(element));
    this.depth--;
    return out;
  }

  private struct(encoding: string): Value {
    this.tick(encoding.length);
    const inner = encoding.slice(1, -1);
    const eq = inner.indexOf("=");
    this.enter();
    const out = splitEncodings(eq < 0 ? "" : inner.slice(eq + 1)).map((e) => this.value(e));
    this.depth--;
    return out;
  }
}

function latin1(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}

export function isObject(value: unknown): value is ArchivedObject {
  return typeof value === "object" && value !== null && (value as ArchivedObject).kind === "object";
}

function isClass(value: unknown): value is ArchivedClass {
  return typeof value === "object" && value !== null && (value as ArchivedClass).kind === "class";
}

/** Whether `object`'s class or one of its superclasses (at most MAX_DEPTH up, cycles cut) is `name`. */
export function isKindOf(object: ArchivedObject, name: string): boolean {
  let cls = object.cls;
  for (let i = 0; cls !== null && i < MAX_DEPTH; i++, cls = cls.superclass) {
    if (cls.name === name) return true;
  }
  return false;
}

/** The root object of a typedstream blob, or null when any part of it up to the root's end is malformed. */
export function readTypedStream(blob: Uint8Array): ArchivedObject | null {
  try {
    return new Reader(blob).root();
  } catch {
    return null;
  }
}
