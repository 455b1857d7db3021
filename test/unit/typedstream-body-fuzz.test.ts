/**
 * decodeBody on damaged input: every truncation, seeded random bit flips and byte overwrites of the real
 * fixtures and of encoded multi-run bodies, and arbitrary bytes. It never throws, its text is always
 * decodeAttributedBody's, and a body's runs always cover its text inside it.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { mulberry32 } from "../../bench/lib/stats.ts";
import {
  composeBody,
  decodeAttributedBody,
  decodeBody,
  encodeBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { bodyProblem, concat, FIXTURE_NAMES, readFixture } from "../helpers/typedstream-fixtures.ts";

const FFFC = "\uFFFC";
const FLIPS = 400;
const OVERWRITES = 100;

/** The first broken promise for `blob`, or null. */
function problem(blob: Uint8Array): string | null {
  let body: ReturnType<typeof decodeBody>;
  try {
    body = decodeBody(blob);
  } catch (error) {
    return `threw ${String(error)}`;
  }
  const text = decodeAttributedBody(blob);
  if ((body?.text ?? null) !== text) return `text ${JSON.stringify(body?.text)} ≠ ${JSON.stringify(text)}`;
  return bodyProblem(body);
}

/** Every prefix, FLIPS single-bit flips and OVERWRITES random bytes: the problems found (at most 5). */
function damage(blob: Uint8Array, seed: number): string[] {
  const found: string[] = [];
  const note = (what: string, mutated: Uint8Array) => {
    const p = problem(mutated);
    if (p !== null && found.length < 5) found.push(`${what}: ${p}`);
  };
  for (let n = 0; n <= blob.length; n++) note(`prefix ${n}`, blob.subarray(0, n));
  const random = mulberry32(seed);
  const at = () => Math.floor(random() * blob.length);
  for (let i = 0; i < FLIPS; i++) {
    const mutated = blob.slice();
    const where = at();
    mutated[where] = (mutated[where] ?? 0) ^ (1 << Math.floor(random() * 8));
    note(`flip at ${where}`, mutated);
  }
  for (let i = 0; i < OVERWRITES; i++) {
    const mutated = blob.slice();
    for (let k = 0; k < 3; k++) mutated[at()] = Math.floor(random() * 256);
    note(`overwrite ${i}`, mutated);
  }
  return found;
}

const ENCODED: Array<[string, () => Uint8Array]> = [
  ["empty body", () => encodeBody({ text: "", runs: [] })],
  [
    "five parts with files and a transcript",
    () =>
      encodeBody(
        composeBody([
          { text: "From a:\r", part: 0 },
          { text: FFFC, part: 1, fileTransferGuid: "D0551D89-4E11-43D0-9A0E-06F19704E97B" },
          { text: "熄灭了 🆄\r", part: 2 },
          { text: FFFC, part: 3, fileTransferGuid: "G2", audioTranscription: "hello there" },
          { text: "x", part: 0 },
        ]),
      ),
  ],
  [
    "40 placeholders (references past one byte)",
    () =>
      encodeBody(
        composeBody(
          Array.from({ length: 40 }, (_, i) => ({ text: FFFC, part: i, fileTransferGuid: `at_${i}` })),
        ),
      ),
  ],
  [
    "a 300-byte text in two parts",
    () =>
      encodeBody(
        composeBody([
          { text: "y".repeat(200), part: 0 },
          { text: "z".repeat(100), part: 1 },
        ]),
      ),
  ],
];

describe("truncations, bit flips and overwrites", () => {
  FIXTURE_NAMES.forEach((name, i) => {
    test(`fixture ${name}`, () => {
      expect(damage(readFixture(name), 0x30_0000 + i)).toEqual([]);
    });
  });

  ENCODED.forEach(([label, make], i) => {
    test(`encoded: ${label}`, () => {
      const blob = make();
      expect(problem(blob)).toBeNull();
      expect(damage(blob, 0x31_0000 + i)).toEqual([]);
    });
  });

  test("a 70,000-byte astral body: 2,000 flips", () => {
    const text = "🆄".repeat(17_500);
    const blob = encodeBody(
      composeBody([
        { text, part: 0 },
        { text: FFFC, part: 1, fileTransferGuid: "G" },
      ]),
    );
    const random = mulberry32(70_000);
    const found: string[] = [];
    for (let i = 0; i < 2_000; i++) {
      const mutated = blob.slice();
      const where = Math.floor(random() * blob.length);
      mutated[where] = (mutated[where] ?? 0) ^ (1 << Math.floor(random() * 8));
      const p = problem(mutated);
      if (p !== null) found.push(`flip at ${where}: ${p}`);
    }
    expect(found.slice(0, 5)).toEqual([]);
  });
});

describe("arbitrary bytes", () => {
  test("any bytes at all", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (blob) => {
        expect(problem(blob)).toBeNull();
      }),
      { seed: 30, numRuns: 2_000 },
    );
  });

  test("a valid header and text, then any attribute bytes", () => {
    const prefix = encodeBody({
      text: "hi",
      runs: [{ start: 0, end: 2, part: 0, fileTransferGuid: null, audioTranscription: null }],
    });
    const textEnd = prefix.indexOf(0x86) + 1;
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (tail) => {
        const blob = concat(prefix.subarray(0, textEnd), tail);
        expect(problem(blob)).toBeNull();
        expect(decodeBody(blob)?.text).toBe("hi");
      }),
      { seed: 31, numRuns: 2_000 },
    );
  });

  test("encoded random bodies with random bytes spliced in", () => {
    const piece = fc.record({
      text: fc.oneof(fc.constant(FFFC), fc.string({ unit: "binary", minLength: 1, maxLength: 8 })),
      part: fc.option(fc.integer({ min: -300, max: 300 })),
      fileTransferGuid: fc.option(fc.string({ maxLength: 12 })),
    });
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 6 }),
        fc.nat(),
        fc.uint8Array({ maxLength: 6 }),
        (pieces, at, junk) => {
          const blob = encodeBody(composeBody(pieces));
          const cut = at % (blob.length + 1);
          expect(problem(concat(blob.subarray(0, cut), junk, blob.subarray(cut)))).toBeNull();
          expect(problem(concat(blob.subarray(0, cut), junk, blob.subarray(cut + junk.length)))).toBeNull();
        },
      ),
      { seed: 32, numRuns: 1_000 },
    );
  });
});
