import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import {
  type Body,
  type BodyRun,
  composeBody,
  decodeAttributedBody,
  decodeBody,
  encodeAttributedBody,
  encodeBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { bodyProblem, indexOfBytes, utf8 } from "../helpers/typedstream-fixtures.ts";

const FFFC = "\uFFFC";
const GUID = "D0551D89-4E11-43D0-9A0E-06F19704E97B";
const run = (start: number, end: number, part: number | null, guid: string | null = null): BodyRun => ({
  start,
  end,
  part,
  fileTransferGuid: guid,
  audioTranscription: null,
});
const roundTrip = (body: Body): Body | null => decodeBody(encodeBody(body));
const count = (blob: Uint8Array, s: string): number => {
  let n = 0;
  for (let at = indexOfBytes(blob, utf8(s)); at >= 0; at = indexOfBytes(blob, utf8(s), at + 1)) n++;
  return n;
};

/** A text of exactly `n` UTF-8 bytes built from `unit` (padded with ASCII). */
function ofUtf8Length(n: number, unit: string): string {
  const size = utf8(unit).length;
  return unit.repeat(Math.floor(n / size)) + "x".repeat(n % size);
}

describe("encodeAttributedBody is encodeBody of one part-0 run", () => {
  test.each(["", "a", "Test 3", "👍🏽", "x".repeat(300)])("%j", (text) => {
    const runs = text === "" ? [] : [run(0, text.length, 0)];
    expect(Array.from(encodeAttributedBody(text))).toEqual(Array.from(encodeBody({ text, runs })));
    expect(decodeBody(encodeAttributedBody(text))).toEqual({ text, runs });
  });
});

describe("layout of several runs", () => {
  const body = composeBody([
    { text: "From a:\r", part: 0 },
    { text: FFFC, part: 1, fileTransferGuid: GUID },
    { text: "To b:\r", part: 2 },
    { text: FFFC, part: 3, fileTransferGuid: "G2", audioTranscription: "hello there" },
    { text: "x", part: 0 },
  ]);
  const blob = encodeBody(body);

  test("round trips with every attribute", () => {
    expect(decodeBody(blob)).toEqual(body);
    expect(decodeAttributedBody(blob)).toBe(body.text);
  });

  test("classes and key strings are written once, then referenced", () => {
    for (const name of ["NSDictionary", "NSNumber", "NSValue", "NSString", "__kIMMessagePartAttributeName"]) {
      expect(count(blob, name)).toBe(1);
    }
    expect(count(blob, "__kIMFileTransferGUIDAttributeName")).toBe(1);
    expect(count(blob, "IMAudioTranscription")).toBe(1);
  });

  test("the last run (part 0 again) reuses dictionary 1 by number: `iI` ref 97, 01, length 1, root end", () => {
    expect(Array.from(blob.subarray(-4))).toEqual([0x97, 0x01, 0x01, 0x86]);
  });

  test("an equal part number is one NSNumber, referenced by the other dictionary", () => {
    const shared = encodeBody(
      composeBody([
        { text: "a", part: 4 },
        { text: FFFC, part: 4, fileTransferGuid: GUID },
      ]),
    );
    expect(count(shared, "NSNumber")).toBe(1);
    expect(decodeBody(shared)?.runs).toEqual([run(0, 1, 4), run(1, 2, 4, GUID)]);
  });

  test("a run with no attributes gets an empty dictionary", () => {
    const plain = { text: "ab", runs: [run(0, 1, null), run(1, 2, 5)] };
    expect(roundTrip(plain)).toEqual(plain);
  });
});

describe("round trips", () => {
  test("1..5 parts, each a text or a placeholder, in every arrangement", () => {
    let checked = 0;
    for (let n = 1; n <= 5; n++) {
      for (let mask = 0; mask < 1 << n; mask++) {
        const pieces = Array.from({ length: n }, (_, i) =>
          (mask >> i) & 1
            ? {
                text: FFFC,
                part: i,
                fileTransferGuid: `at_${i}_${GUID}`,
                audioTranscription: i === 2 ? "hi" : null,
              }
            : { text: `part ${i} 🆄\r`, part: i },
        );
        const body = composeBody(pieces);
        expect(roundTrip(body)).toEqual(body);
        checked++;
      }
    }
    expect(checked).toBe(62);
  });

  test("the empty body: no runs", () => {
    expect(roundTrip({ text: "", runs: [] })).toEqual({ text: "", runs: [] });
  });

  for (const n of [127, 128, 255, 256, 32_767, 32_768, 70_000]) {
    for (const unit of ["x", "熄", "🆄"]) {
      test(`${n}-byte text of ${unit} in three runs around a placeholder`, () => {
        const text = ofUtf8Length(n, unit);
        expect(utf8(text).length).toBe(n);
        const cut = Math.floor(text.length / 2) & ~1; // an even offset: never inside a surrogate pair
        const body = composeBody([
          { text: text.slice(0, cut), part: 0 },
          { text: FFFC, part: 1, fileTransferGuid: GUID },
          { text: text.slice(cut), part: 2 },
        ]);
        expect(roundTrip(body)).toEqual(body);
      });
    }
  }

  test("astral characters: offsets are UTF-16 units, not code points", () => {
    const body = composeBody([
      { text: "𝖍𝖊", part: 0 },
      { text: FFFC, part: 1, fileTransferGuid: GUID },
    ]);
    expect(body.runs).toEqual([run(0, 4, 0), run(4, 5, 1, GUID)]);
    expect(roundTrip(body)).toEqual(body);
  });

  test("part numbers across the integer forms (one byte, 81, 82, negative)", () => {
    const parts = [0, 127, 128, -1, -110, -111, -128, 32_767, 40_000, -40_000, 2 ** 31 - 1, -(2 ** 31)];
    const body = composeBody(parts.map((part, i) => ({ text: i % 2 ? FFFC : "t", part })));
    expect(roundTrip(body)).toEqual(body);
  });

  test("90 attachments: object references past one byte (0x00–0x7F, then 81 + i16)", () => {
    const pieces = Array.from({ length: 90 }, (_, i) => [
      { text: FFFC, part: 2 * i, fileTransferGuid: `at_${i}_${GUID}` },
      { text: `t${i}`, part: 2 * i + 1 },
    ]).flat();
    const body = composeBody(pieces);
    expect(roundTrip(body)).toEqual(body);
  });

  test("property: any body whose neighbouring runs differ comes back exactly", () => {
    const piece = fc.record({
      text: fc.oneof(fc.constant(FFFC), fc.string({ unit: "binary", minLength: 1, maxLength: 12 })),
      part: fc.option(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
      fileTransferGuid: fc.option(fc.string({ unit: "binary", maxLength: 40 })),
      audioTranscription: fc.option(fc.string({ unit: "binary", maxLength: 40 })),
    });
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const body = composeBody(pieces);
        const key = (r: BodyRun) => JSON.stringify([r.part, r.fileTransferGuid, r.audioTranscription]);
        fc.pre(body.runs.every((r, i) => i === 0 || key(r) !== key(body.runs[i - 1] as BodyRun)));
        expect(roundTrip(body)).toEqual(body);
        expect(decodeAttributedBody(encodeBody(body))).toBe(body.text);
      }),
      { seed: 30, numRuns: 400 },
    );
  });
});

describe("composeBody and input checks", () => {
  test("composeBody drops empty pieces and defaults attributes to null", () => {
    expect(
      composeBody([{ text: "" }, { text: "ab" }, { text: "", part: 3 }, { text: FFFC, part: 1 }]),
    ).toEqual({
      text: `ab${FFFC}`,
      runs: [run(0, 2, null), run(2, 3, 1)],
    });
  });

  test("neighbouring runs with equal attributes are merged, as NSAttributedString does", () => {
    const body = { text: "abc", runs: [run(0, 1, 0), run(1, 2, 0), run(2, 3, 1)] };
    expect(roundTrip(body)).toEqual({ text: "abc", runs: [run(0, 2, 0), run(2, 3, 1)] });
  });

  const bad: Array<[string, Body]> = [
    ["a gap", { text: "abc", runs: [run(0, 1, 0), run(2, 3, 1)] }],
    ["an overlap", { text: "abc", runs: [run(0, 2, 0), run(1, 3, 1)] }],
    ["an empty run", { text: "abc", runs: [run(0, 0, 0), run(0, 3, 1)] }],
    ["a run past the end", { text: "abc", runs: [run(0, 4, 0)] }],
    ["runs short of the end", { text: "abc", runs: [run(0, 2, 0)] }],
    ["no runs for a text", { text: "abc", runs: [] }],
    ["a run on the empty text", { text: "", runs: [run(0, 1, 0)] }],
    ["a fractional part", { text: "a", runs: [run(0, 1, 0.5)] }],
    ["a part past 32 bits", { text: "a", runs: [run(0, 1, 2 ** 31)] }],
    ["a lone surrogate in the text", { text: "a\ud800", runs: [run(0, 2, 0)] }],
    ["a lone surrogate in a GUID", { text: "a", runs: [run(0, 1, 0, "\udc00")] }],
  ];
  test.each(bad)("%s → RangeError", (_label, body) => {
    expect(() => encodeBody(body)).toThrow(RangeError);
  });

  test("every encoded body decodes to runs that cover its text", () => {
    const body = composeBody([
      { text: "a", part: 0 },
      { text: FFFC, fileTransferGuid: GUID },
    ]);
    expect(bodyProblem(decodeBody(encodeBody(body)))).toBeNull();
  });
});
