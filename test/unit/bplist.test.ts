import { describe, expect, test } from "bun:test";
import { mulberry32 } from "../../bench/lib/stats.ts";
import { PLIST_MAX_DEPTH, readBinaryPlist } from "../../src/connectors/device-messenger/bplist.ts";
import { writeBinaryPlist } from "../../src/demo/bplist-writer.ts";
import { factShapes, fromHex, PYTHON_BPLIST, ZOO_DATE_SECONDS } from "../helpers/bplist-python.ts";

// ---------------------------------------------------------------------------------------------------
// helpers

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
/** The values the Python script wrote (its `t` blobs are UTF-8). */
const SHAPES = factShapes(utf8);

function beBytes(v: number | bigint, size: number): number[] {
  const out: number[] = [];
  let x = BigInt.asUintN(size * 8, BigInt(v));
  for (let i = 0; i < size; i++) {
    out.unshift(Number(x & 0xffn));
    x >>= 8n;
  }
  return out;
}

interface Shape {
  offsetSize?: number;
  refSize?: number;
  count?: number | bigint;
  top?: number | bigint;
  table?: number | bigint;
  header?: string;
  /** Replaces the offset of object i. */
  offsets?: Record<number, number>;
}

/** Assembles a bplist00 by hand from each object's raw bytes (1-byte refs unless told), for shapes no writer makes. */
function assemble(objects: number[][], shape: Shape = {}): Uint8Array {
  const offsetSize = shape.offsetSize ?? 1;
  const header = [...(shape.header ?? "bplist00")].map((c) => c.charCodeAt(0));
  const body: number[] = [...header];
  const offsets: number[] = [];
  for (const [i, o] of objects.entries()) {
    offsets.push(shape.offsets?.[i] ?? body.length);
    body.push(...o);
  }
  const table = body.length;
  for (const off of offsets) {
    if (offsetSize > 0 && off >= 2 ** (8 * offsetSize))
      throw new Error(`offset ${off} does not fit ${offsetSize} bytes`);
    body.push(...beBytes(off, offsetSize));
  }
  body.push(0, 0, 0, 0, 0, 0, offsetSize, shape.refSize ?? 1);
  body.push(...beBytes(shape.count ?? objects.length, 8), ...beBytes(shape.top ?? 0, 8));
  body.push(...beBytes(shape.table ?? table, 8));
  return Uint8Array.from(body);
}

const ascii = (s: string): number[] => [0x50 | s.length, ...[...s].map((c) => c.charCodeAt(0))];

// ---------------------------------------------------------------------------------------------------
// fixtures written by Python's plistlib

describe("plists written by Python's plistlib", () => {
  test("the unsent shape", () => {
    expect(readBinaryPlist(fromHex(PYTHON_BPLIST.unsent))).toEqual(SHAPES.unsent);
  });

  test("the edited shape: ec history with data and reals", () => {
    expect(readBinaryPlist(fromHex(PYTHON_BPLIST.edited))).toEqual(SHAPES.edited);
  });

  test("the two-part shape with bcg and euh", () => {
    expect(readBinaryPlist(fromHex(PYTHON_BPLIST.twoPart))).toEqual(SHAPES.twoPart);
  });

  test("every type plistlib writes: null, bools, int sizes, reals, date, data, strings, UIDs, nesting", () => {
    const zoo = readBinaryPlist(fromHex(PYTHON_BPLIST.zoo));
    expect(zoo).toEqual({
      none: null,
      no: false,
      yes: true,
      ints: [
        0,
        255,
        256,
        65535,
        65536,
        2 ** 32 - 1,
        2 ** 32,
        Number.MAX_SAFE_INTEGER,
        2n ** 53n,
        2n ** 63n - 1n,
        -1,
        -(2n ** 63n),
        2n ** 63n,
        2n ** 64n - 1n,
      ],
      reals: [1.5, -0.25, 1e300, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY],
      date: ZOO_DATE_SECONDS,
      data: [new Uint8Array(0), Uint8Array.of(0, 0xff), Uint8Array.from({ length: 20 }, (_, i) => i)],
      strings: [
        "",
        "ascii",
        "exactly fifteen",
        "longer than fifteen chars",
        "héllo",
        "👍🏽",
        "日本語".repeat(6),
      ],
      uids: [{ uid: 0 }, { uid: 255 }, { uid: 256 }, { uid: 70000 }],
      nested: [[[]], {}, { k: [1, "1", true] }],
      shared: [7, 7, "x", "x"],
    });
    const data = (zoo as { data: unknown[] }).data;
    for (const d of data) expect(Object.getPrototypeOf(d)).toBe(Uint8Array.prototype);
  });

  test("2-byte refs and 2-byte offsets (260 objects)", () => {
    expect(readBinaryPlist(fromHex(PYTHON_BPLIST.wide))).toEqual(Array.from({ length: 260 }, (_, i) => i));
  });
});

// ---------------------------------------------------------------------------------------------------
// hand-assembled shapes

describe("object types beyond what plistlib writes", () => {
  test("a 4-byte real, a set (as an array), fill (as null)", () => {
    expect(readBinaryPlist(assemble([[0x22, 0x3f, 0xc0, 0, 0]]))).toBe(1.5);
    expect(readBinaryPlist(assemble([[0xc2, 1, 2], [0x10, 5], [0x09]]))).toEqual([5, true]);
    expect(readBinaryPlist(assemble([[0xa1, 1], [0x0f]]))).toEqual([null]);
  });

  test("8-byte ints are signed; 16-byte ints are signed 128-bit, numbers when safe", () => {
    expect(readBinaryPlist(assemble([[0x13, ...beBytes(-5, 8)]]))).toBe(-5);
    expect(readBinaryPlist(assemble([[0x13, ...beBytes(-(2 ** 53), 8)]]))).toBe(-(2n ** 53n));
    expect(readBinaryPlist(assemble([[0x14, ...beBytes(-7, 16)]]))).toBe(-7);
    expect(readBinaryPlist(assemble([[0x14, ...beBytes(2n ** 100n, 16)]]))).toBe(2n ** 100n);
    expect(readBinaryPlist(assemble([[0x12, 0xff, 0xff, 0xff, 0xff]]))).toBe(2 ** 32 - 1);
  });

  test("UTF-16 strings keep every code unit, lone surrogates included", () => {
    expect(readBinaryPlist(assemble([[0x61, 0xd8, 0x3d]]))).toBe("\ud83d");
    expect(readBinaryPlist(assemble([[0x60]]))).toBe("");
  });

  test("an 8-byte UID, and a count written with a length marker though it is small", () => {
    expect(readBinaryPlist(assemble([[0x87, ...beBytes(2 ** 40, 8)]]))).toEqual({ uid: 2 ** 40 });
    expect(readBinaryPlist(assemble([[0x5f, 0x10, 0x02, 0x68, 0x69]]))).toBe("hi");
  });

  test("3-byte offsets and refs (sizes Apple never writes) still read", () => {
    const bytes = assemble([[0xa1, 0, 0, 1], ascii("x")], { offsetSize: 3, refSize: 3 });
    expect(readBinaryPlist(bytes)).toEqual(["x"]);
  });

  test("the top object need not be first", () => {
    expect(readBinaryPlist(assemble([ascii("no"), ascii("yes")], { top: 1 }))).toBe("yes");
  });

  test("a top-level null gives null (indistinguishable from malformed)", () => {
    expect(readBinaryPlist(assemble([[0x00]]))).toBeNull();
  });

  test("dict: the last duplicate key wins; __proto__ is an own key, never the prototype", () => {
    expect(readBinaryPlist(assemble([[0xd2, 1, 1, 2, 3], ascii("k"), [0x10, 1], [0x10, 2]]))).toEqual({
      k: 2,
    });
    const d = readBinaryPlist(assemble([[0xd1, 1, 2], ascii("__proto__"), [0xa0]])) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
    expect(Object.keys(d)).toEqual(["__proto__"]);
    expect(Object.getOwnPropertyDescriptor(d, "__proto__")?.value).toEqual([]);
  });

  test("a shared object decodes once and is the same value at both places", () => {
    const v = readBinaryPlist(
      assemble([
        [0xa2, 1, 1],
        [0xa1, 2],
        [0x10, 9],
      ]),
    ) as unknown[][];
    expect(v).toEqual([[9], [9]]);
    expect(v[0]).toBe(v[1] as unknown[]);
  });

  test("a doubling graph 60 levels deep (2^60 paths) reads in linear time", () => {
    const objects = Array.from({ length: 60 }, (_, i) => [0xa2, i + 1, i + 1]);
    objects.push([0x10, 1]);
    const started = performance.now();
    expect(readBinaryPlist(assemble(objects))).not.toBeNull();
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("data is a copy: changing the input afterwards changes nothing", () => {
    const bytes = assemble([[0x42, 1, 2]]);
    const v = readBinaryPlist(bytes) as Uint8Array;
    bytes[9] = 7;
    expect(v).toEqual(Uint8Array.of(1, 2));
  });

  test("a Buffer input gives plain Uint8Array data", () => {
    const v = readBinaryPlist(Buffer.from(assemble([[0x41, 1]])));
    expect(Object.getPrototypeOf(v)).toBe(Uint8Array.prototype);
  });

  test("a plist inside a larger buffer (a subarray view) reads from its own bytes", () => {
    const inner = assemble([ascii("in")]);
    const outer = new Uint8Array(inner.length + 10);
    outer.set(inner, 5);
    expect(readBinaryPlist(outer.subarray(5, 5 + inner.length))).toBe("in");
  });
});

describe("malformed input gives null", () => {
  const cases: [string, () => Uint8Array][] = [
    ["an empty buffer", () => new Uint8Array(0)],
    ["a buffer shorter than header + object + trailer", () => assemble([[0x09]]).subarray(0, 41)],
    ["another header", () => assemble([[0x09]], { header: "bplist01" })],
    ["an XML plist", () => utf8(`<?xml version="1.0"?><plist><true/></plist>${" ".repeat(40)}`)],
    ["offset size 0", () => assemble([[0x09]], { offsetSize: 0 })],
    ["offset size 9", () => assemble([[0x09]], { offsetSize: 9 })],
    ["ref size 0", () => assemble([[0xa1, 0], [0x09]], { refSize: 0 })],
    ["ref size 9", () => assemble([[0xa1, 0], [0x09]], { refSize: 9 })],
    ["zero objects", () => assemble([[0x09]], { count: 0 })],
    ["2^50 objects in a 42-byte file", () => assemble([[0x09]], { count: 2 ** 50 })],
    ["2^64 − 1 objects", () => assemble([[0x09]], { count: 2n ** 64n - 1n })],
    ["more objects than bytes before the table", () => assemble([[0x09]], { count: 2 })],
    ["the top object past the count", () => assemble([[0x09]], { top: 1 })],
    ["an offset table past the trailer", () => assemble([[0x09]], { table: 1000 })],
    ["an offset table inside the header", () => assemble([[0x09]], { table: 3 })],
    ["an offset into the header", () => assemble([[0x09]], { offsets: { 0: 2 } })],
    ["an offset into the offset table", () => assemble([[0x09]], { offsets: { 0: 9 } })],
    ["a ref past the count", () => assemble([[0xa1, 5], [0x09]])],
    ["an array whose refs run past the objects", () => assemble([[0xaf, 0x12, 0x7f, 0xff, 0xff, 0xff]])],
    ["an array claiming 2^62 items", () => assemble([[0xaf, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]])],
    ["data running past the objects", () => assemble([[0x45, 1, 2]])],
    ["data claiming 2^40 bytes", () => assemble([[0x4f, 0x13, 0, 0, 1, 0, 0, 0, 0, 0]])],
    ["a length marker that is not an int", () => assemble([[0x5f, 0x20, 1, 0x41]])],
    ["a 16-byte length marker", () => assemble([[0x5f, 0x14, ...beBytes(1, 16), 0x41]])],
    ["a non-ASCII byte in an ASCII string", () => assemble([[0x52, 0x41, 0xe9]])],
    ["a UTF-16 string with an odd byte count", () => assemble([[0x61, 0x00]])],
    ["an int of 2^5 bytes", () => assemble([[0x15, ...new Array(32).fill(0)]])],
    ["a truncated 8-byte int", () => assemble([[0x13, 0, 0, 0]])],
    ["a 2-byte real", () => assemble([[0x21, 0, 0]])],
    ["a 4-byte date", () => assemble([[0x32, 0, 0, 0, 0]])],
    ["a 9-byte UID", () => assemble([[0x88, ...new Array(9).fill(0)]])],
    ["an ordset (0xB0)", () => assemble([[0xb1, 1], [0x09]])],
    ["a UTF-8 string (0x70, not bplist00)", () => assemble([[0x71, 0x41]])],
    ["markers 0x0C, 0x0E, 0x90, 0xE0, 0xF0", () => assemble([[0x0c]])],
    ["a dict with an int key", () => assemble([[0xd1, 1, 2], [0x10, 1], [0x09]])],
    ["a dict with a data key", () => assemble([[0xd1, 1, 2], [0x41, 0x41], [0x09]])],
    ["an array containing itself", () => assemble([[0xa1, 0]])],
    ["a dict whose value is its ancestor", () => assemble([[0xa1, 1], [0xd1, 2, 0], ascii("k")])],
    ["a key that is its own dict", () => assemble([[0xd1, 0, 1], [0x09]])],
  ];
  for (const [name, make] of cases) test(name, () => expect(readBinaryPlist(make())).toBeNull());

  test("every unknown marker byte", () => {
    for (const m of [0x01, 0x07, 0x0a, 0x0c, 0x0d, 0x0e, 0x90, 0x9f, 0xe0, 0xef, 0xf0, 0xff]) {
      expect(readBinaryPlist(assemble([[m, 0, 0, 0, 0, 0, 0, 0, 0]]))).toBeNull();
    }
  });

  test("not a Uint8Array", () => {
    expect(readBinaryPlist("bplist00" as unknown as Uint8Array)).toBeNull();
    expect(readBinaryPlist(null as unknown as Uint8Array)).toBeNull();
  });
});

describe(`nesting is capped at ${PLIST_MAX_DEPTH} containers`, () => {
  const nested = (n: number): Uint8Array =>
    assemble([...Array.from({ length: n - 1 }, (_, i) => [0xa1, i + 1]), [0xa0]]);
  const depthOf = (v: unknown): number => (Array.isArray(v) ? 1 + (v.length ? depthOf(v[0]) : 0) : 0);

  test(`${PLIST_MAX_DEPTH} nested arrays read`, () => {
    expect(depthOf(readBinaryPlist(nested(PLIST_MAX_DEPTH)))).toBe(PLIST_MAX_DEPTH);
  });

  test(`${PLIST_MAX_DEPTH + 1} nested arrays give null`, () => {
    expect(readBinaryPlist(nested(PLIST_MAX_DEPTH + 1))).toBeNull();
  });

  test("a shared object counts where it is met deepest, not only where it was first read", () => {
    // [chain of 40, [[…30 levels…[chain of 40]]]]: the chain (40 arrays) is read first at depth 1.
    const shared = (outerLevels: number): Uint8Array => {
      const objects: number[][] = [[0xa2, 1, 41]];
      for (let i = 1; i < 40; i++) objects.push([0xa1, i + 1]);
      objects.push([0xa0]); // object 40 ends the chain (objects 1..40)
      for (let i = 0; i < outerLevels; i++) objects.push([0xa1, i === outerLevels - 1 ? 1 : 42 + i]);
      return assemble(objects);
    };
    expect(readBinaryPlist(shared(20))).not.toBeNull(); // 1 + 20 + 40 = 61 levels
    expect(readBinaryPlist(shared(23))).not.toBeNull(); // 64
    expect(readBinaryPlist(shared(24))).toBeNull(); // 65
  });

  test("10,000 nested arrays give null without exhausting the stack", () => {
    const objects = Array.from({ length: 9_999 }, (_, i) => [0xa1, ...beBytes(i + 1, 2)]);
    objects.push([0xa0]);
    expect(readBinaryPlist(assemble(objects, { refSize: 2, offsetSize: 2 }))).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------
// fuzz: truncations and bit flips never throw

describe("fuzz", () => {
  const seeds: [string, Uint8Array][] = [
    ...Object.entries(PYTHON_BPLIST).map(([k, h]): [string, Uint8Array] => [k, fromHex(h)]),
    [
      "writer: data and a long UTF-16 string",
      writeBinaryPlist({ d: new Uint8Array(300), s: "é".repeat(300) }),
    ],
  ];

  /** Reads and walks the result (a throw anywhere fails the test); returns whether it was null. */
  const readAndWalk = (bytes: Uint8Array): boolean => {
    const v = readBinaryPlist(bytes);
    const walk = (x: unknown, depth: number): void => {
      expect(depth).toBeLessThanOrEqual(PLIST_MAX_DEPTH);
      if (Array.isArray(x)) for (const y of x) walk(y, depth + 1);
      else if (x && typeof x === "object" && !(x instanceof Uint8Array)) {
        for (const y of Object.values(x)) walk(y, depth + 1);
      }
    };
    walk(v, 0);
    return v === null;
  };

  test("every truncation of every seed plist gives null or a value", () => {
    let nulls = 0;
    let total = 0;
    for (const [, bytes] of seeds) {
      for (let n = 0; n < bytes.length; n++) {
        total++;
        if (readAndWalk(bytes.subarray(0, n))) nulls++;
      }
      expect(readAndWalk(bytes)).toBe(false);
    }
    expect(nulls).toBe(total); // a cut trailer is never mistaken for a plist
  });

  test("5,000 random 1–4 bit flips (seeded) give null or a value", () => {
    const rand = mulberry32(20261124);
    let nulls = 0;
    for (let i = 0; i < 5000; i++) {
      const [, seed] = seeds[i % seeds.length] as [string, Uint8Array];
      const bytes = seed.slice();
      const flips = 1 + Math.floor(rand() * 4);
      for (let f = 0; f < flips; f++) {
        const at = Math.floor(rand() * bytes.length);
        bytes[at] = (bytes[at] as number) ^ (1 << Math.floor(rand() * 8));
      }
      if (readAndWalk(bytes)) nulls++;
    }
    // Both outcomes occur: flips in string bytes still read, flips in markers, refs and the trailer do not.
    expect(nulls).toBeGreaterThan(100);
    expect(nulls).toBeLessThan(4900);
  });

  test("2,000 random trailers over a valid body give null or a value", () => {
    const rand = mulberry32(7);
    const base = fromHex(PYTHON_BPLIST.edited);
    for (let i = 0; i < 2000; i++) {
      const bytes = base.slice();
      for (let k = bytes.length - 26; k < bytes.length; k++)
        if (rand() < 0.2) bytes[k] = Math.floor(rand() * 256);
      readAndWalk(bytes);
    }
  });
});
