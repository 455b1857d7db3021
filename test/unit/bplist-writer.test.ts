import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { readBinaryPlist } from "../../src/connectors/device-messenger/bplist.ts";
import { type PlistInput, writeBinaryPlist } from "../../src/demo/bplist-writer.ts";
import { factShapes, fromHex, PYTHON_BPLIST } from "../helpers/bplist-python.ts";

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const roundTrip = (v: PlistInput): unknown => readBinaryPlist(writeBinaryPlist(v));

/** The reader's view of a written value: bigints in the safe range come back as numbers. */
function expected(v: PlistInput): unknown {
  if (typeof v === "bigint") return v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n ? Number(v) : v;
  if (Array.isArray(v)) return v.map(expected);
  if (v instanceof Uint8Array || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    Object.defineProperty(out, k, { value: expected(x), enumerable: true });
  return out;
}

// The fact shapes of issue 30, as Messages writes them (t: typedstream bytes stand in as UTF-8 here).
const { unsent: UNSENT, edited: EDITED, twoPart: TWO_PART } = factShapes(utf8);
const WIDE = Array.from({ length: 260 }, (_, i) => i);

describe("bytes equal Python plistlib's for the same value", () => {
  const cases: [string, PlistInput, string][] = [
    ["unsent", UNSENT, PYTHON_BPLIST.unsent],
    ["edited", EDITED, PYTHON_BPLIST.edited],
    ["two-part", TWO_PART, PYTHON_BPLIST.twoPart],
    ["260 ints (2-byte refs and offsets)", WIDE, PYTHON_BPLIST.wide],
  ];
  for (const [name, value, python] of cases) {
    test(name, () => expect(hex(writeBinaryPlist(value))).toBe(python));
  }
});

describe("read(write(x)) equals x", () => {
  const shapes: [string, PlistInput][] = [
    ["unsent", UNSENT],
    ["edited", EDITED],
    ["two-part", TWO_PART],
    ["partial unsend", { amc: 0, ust: true, otr: { "0": { lo: 0, le: 1 }, "1": { lo: 1, le: 5 } }, rp: [1] }],
    ["an empty dict", {}],
    ["an empty array", []],
    ["an empty string", ""],
    ["empty data", new Uint8Array(0)],
    ["false", false],
    ["true", true],
    [
      "ints at every size boundary",
      [0, 14, 15, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER],
    ],
    ["negative ints", [-1, -128, -129, -65536, -(2 ** 32), Number.MIN_SAFE_INTEGER]],
    [
      "bigints at the edges",
      [2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, 2n ** 64n - 1n],
    ],
    [
      "reals",
      [
        0.5,
        -0.25,
        1e-300,
        1e300,
        2 ** 53,
        -0,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
      ],
    ],
    [
      "strings across the 15-unit length marker",
      ["a".repeat(14), "a".repeat(15), "a".repeat(16), "a".repeat(300)],
    ],
    ["UTF-16 strings", ["é", "👍🏽", "熄灭了", "\ud83d", "\u0000", "日本語".repeat(100)]],
    ["a long UTF-16 string (2-byte count)", "é".repeat(70_000)],
    [
      "70,000 bytes of data (4-byte offsets)",
      { data: Uint8Array.from({ length: 70_000 }, (_, i) => i % 251) },
    ],
    ["deep nesting", [[[[[[[[{ a: [[["x"]]] }]]]]]]]]],
    [
      "repeated scalars and keys",
      [{ lo: 0, le: 0 }, { lo: 0, le: 0 }, "lo", "le", 0, 0.5, 0.5, utf8("x"), utf8("x")],
    ],
    ["a __proto__ key", JSON.parse('{"__proto__": [1], "b": 2}')],
    ["integer-like keys", { "10": 1, "2": 2, a: 3, "0": 4 }],
    ["300 distinct keys", Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`key${i}`, i]))],
  ];
  for (const [name, value] of shapes) {
    test(name, () => expect(roundTrip(value)).toEqual(expected(value)));
  }

  test("-0 is written as a real and read back as -0", () => {
    expect(Object.is(roundTrip(-0), -0)).toBe(true);
    expect(writeBinaryPlist(-0)[8]).toBe(0x23);
  });

  test("a number that is not a safe integer is a real; a bigint is an int", () => {
    expect(writeBinaryPlist(2 ** 53)[8]).toBe(0x23);
    expect(roundTrip(2 ** 53)).toBe(2 ** 53);
    expect(writeBinaryPlist(2n ** 53n)[8]).toBe(0x13);
    expect(roundTrip(2n ** 53n)).toBe(2n ** 53n);
  });

  test("int markers and widths follow plistlib", () => {
    const marker = (v: number | bigint) => hex(writeBinaryPlist(v).subarray(8, -1 - 32));
    expect(marker(0)).toBe("1000");
    expect(marker(255)).toBe("10ff");
    expect(marker(256)).toBe("110100");
    expect(marker(65536)).toBe("1200010000");
    expect(marker(2 ** 32)).toBe("130000000100000000");
    expect(marker(-1)).toBe("13ffffffffffffffff");
    expect(marker(2n ** 63n)).toBe("1400000000000000008000000000000000");
  });

  test("a container met twice is written once and shared", () => {
    const inner = [1, 2];
    const bytes = writeBinaryPlist([inner, inner]);
    expect(bytes[bytes.length - 17]).toBe(4); // the trailer's object count: outer, inner, 1, 2
    expect(readBinaryPlist(bytes)).toEqual([
      [1, 2],
      [1, 2],
    ]);
  });

  test("property: any value made of the accepted types survives the round trip", () => {
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.string(),
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.boolean(),
        fc.integer(),
        fc.maxSafeInteger(),
        fc.double(),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }),
        fc.uint8Array({ maxLength: 40 }),
        fc.array(tie("value"), { maxLength: 6 }),
        fc.dictionary(fc.string({ maxLength: 8 }), tie("value"), { maxKeys: 6 }),
      ),
    }));
    fc.assert(
      fc.property(value, (v) => {
        expect(roundTrip(v as PlistInput)).toEqual(expected(v as PlistInput));
      }),
      { seed: 20261124, numRuns: 500 },
    );
  });
});

describe("values a plist cannot hold throw", () => {
  const bad: [string, unknown][] = [
    ["undefined", undefined],
    ["null", null],
    ["a function", () => 1],
    ["a symbol", Symbol("s")],
    ["a Date", new Date(0)],
    ["a Map", new Map()],
    ["an ArrayBuffer", new ArrayBuffer(2)],
    ["undefined inside a dict", { a: undefined }],
    ["a bigint below -2^63", -(2n ** 63n) - 1n],
    ["a bigint of 2^64", 2n ** 64n],
  ];
  for (const [name, v] of bad) test(name, () => expect(() => writeBinaryPlist(v as PlistInput)).toThrow());

  test("a cycle", () => {
    const a: PlistInput[] = [];
    a.push(a);
    expect(() => writeBinaryPlist(a)).toThrow(/itself/);
  });
});

// Python reads our bytes and writes them again; identical bytes mean it read the same values. python3 is on
// every machine gw is tested on (CI's included), as service-plist.test.ts also relies on.
describe.skipIf(Bun.which("python3") === null)("Python plistlib reads our output", () => {
  const script =
    "import plistlib,sys; v=plistlib.loads(sys.stdin.buffer.read()); " +
    "sys.stdout.buffer.write(plistlib.dumps(v, fmt=plistlib.FMT_BINARY, sort_keys=False))";
  const values: [string, PlistInput][] = [
    ["unsent", UNSENT],
    ["edited", EDITED],
    ["two-part", TWO_PART],
    ["strings", ["", "ascii", "é", "👍🏽", "a".repeat(300), "日本語".repeat(100)]],
    ["numbers", [0, -1, 2 ** 40, 0.5, -0, 1e300, 2n ** 63n, -(2n ** 63n)]],
    ["data and nesting", { d: new Uint8Array(70_000).fill(7), n: [[{}], []], b: [true, false] }],
  ];
  for (const [name, v] of values) {
    test(name, () => {
      const ours = writeBinaryPlist(v);
      const py = Bun.spawnSync(["python3", "-c", script], { stdin: ours });
      expect(py.exitCode).toBe(0);
      expect(hex(new Uint8Array(py.stdout))).toBe(hex(ours));
    });
  }
});

test("reading a Python fixture and writing it again gives Python's bytes", () => {
  for (const h of [PYTHON_BPLIST.unsent, PYTHON_BPLIST.edited, PYTHON_BPLIST.twoPart, PYTHON_BPLIST.wide]) {
    expect(hex(writeBinaryPlist(readBinaryPlist(fromHex(h)) as PlistInput))).toBe(h);
  }
});
