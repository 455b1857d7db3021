import { describe, expect, test } from "bun:test";
import {
  type BodyRun,
  decodeAttributedBody,
  decodeBody,
  encodeAttributedBody,
  encodeBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { readTypedStream } from "../../src/connectors/device-messenger/typedstream-reader.ts";
import {
  bodyProblem,
  bytes,
  concat,
  EXPECTED,
  FIXTURE_NAMES,
  HAVE_FIXTURES,
  indexOfBytes,
  readFixture,
  utf8,
} from "../helpers/typedstream-fixtures.ts";

const FFFC = "\uFFFC";
type Row = [start: number, end: number, part: number | null, guid?: string | null, transcript?: string];
const run = ([start, end, part, guid = null, transcript]: Row): BodyRun => ({
  start,
  end,
  part,
  fileTransferGuid: guid,
  audioTranscription: transcript ?? null,
});
const runsOf = (name: string): BodyRun[] | undefined => decodeBody(readFixture(name))?.runs;

describe("real fixtures through decodeBody", () => {
  if (!HAVE_FIXTURES) {
    test("fixture folder absent: no real-blob cases generated", () => {
      expect(FIXTURE_NAMES).toEqual([]);
    });
    return;
  }

  test("all 41 blobs are present", () => {
    expect(FIXTURE_NAMES.length).toBe(41);
  });

  for (const name of FIXTURE_NAMES) {
    test(`${name}: the text is expected.json's and decodeAttributedBody's; runs cover it`, () => {
      const blob = readFixture(name);
      const body = decodeBody(blob);
      expect(body?.text ?? null).toBe(EXPECTED[name] ?? null);
      expect(body?.text ?? null).toBe(decodeAttributedBody(blob));
      expect(bodyProblem(body)).toBeNull();
      // Every real body's runs are read, not the fallback: each one carries a message part.
      if (body !== null) for (const r of body.runs) expect(r.part).not.toBeNull();
    });
  }

  test("Transcription: one U+FFFC with its file, transcript and part 0", () => {
    expect(runsOf("Transcription")).toEqual([
      run([0, 1, 0, "4C339597-EBBB-4978-9B87-521C0471A848", "This is a test"]),
    ]);
  });

  test("MultiPartWithDeleted: part 0 text, part 1 file, part 2 text", () => {
    const body = decodeBody(readFixture("MultiPartWithDeleted"));
    expect(body?.text).toBe(`From arbitrary byte stream:\r${FFFC}To native Rust data structures:\r`);
    expect(body?.runs).toEqual([
      run([0, 28, 0]),
      run([28, 29, 1, "D0551D89-4E11-43D0-9A0E-06F19704E97B"]),
      run([29, 61, 2]),
    ]);
  });

  test("MultiPart: six parts alternating file and text", () => {
    const guid = (i: number) => `at_${i}_F0668F79-20C2-49C9-A87F-1B007ABB0CED`;
    expect(decodeBody(readFixture("MultiPart"))?.text).toBe(`${FFFC}test 1${FFFC}test 2 ${FFFC}test 3`);
    expect(runsOf("MultiPart")).toEqual([
      run([0, 1, 0, guid(0)]),
      run([1, 7, 1]),
      run([7, 8, 2, guid(2)]),
      run([8, 15, 3]),
      run([15, 16, 4, guid(4)]),
      run([16, 22, 5]),
    ]);
  });

  test("Attachment: the image in part 0, the caption in part 1", () => {
    expect(runsOf("Attachment")).toEqual([
      run([0, 1, 0, "at_0_2E5F12C3-E649-48AA-954D-3EA67C016BCC"]),
      run([1, 78, 1]),
    ]);
  });

  test("MultiAttachment: 19 placeholders, part i holds file at_i_…", () => {
    const expected = Array.from({ length: 19 }, (_, i) =>
      run([i, i + 1, i, `at_${i}_48B9C973-3466-438C-BE72-E5B498D30772`]),
    );
    expect(runsOf("MultiAttachment")).toEqual(expected);
  });

  test("other placeholders: AppMessage, AttachmentI16 (part 1 alone), CustomTapback", () => {
    expect(runsOf("AppMessage")).toEqual([run([0, 1, 0, "F0B18A15-E9A5-4B18-A38F-685B7B3FF037"])]);
    expect(runsOf("AttachmentI16")).toEqual([run([0, 1, 1, "at_0_BE588799-C4BC-47DF-A56D-7EE90C74911D"])]);
    expect(runsOf("CustomTapback")).toEqual([
      run([0, 75, 0]),
      run([75, 76, 1, "41C4376E-397E-4C42-84E2-B16F7801F638"]),
    ]);
  });

  test("styled text keeps its runs as declared (Mention, URL, TextEffects, TextStylesMixed)", () => {
    expect(runsOf("Mention")).toEqual([run([0, 5, 0]), run([5, 8, 0]), run([8, 9, 0])]);
    expect(runsOf("URL")).toEqual([run([0, 34, 0])]);
    const effects = [0, 3, 4, 10, 15, 16, 19, 20, 28, 34, 35, 40, 41, 47];
    expect(runsOf("TextEffects")).toEqual(effects.slice(1).map((end, i) => run([effects[i] ?? 0, end, 0])));
    expect(runsOf("TextStylesMixed")).toEqual([
      run([0, 9, 0]),
      run([9, 17, 0]),
      run([17, 23, 0]),
      run([23, 30, 0]),
    ]);
  });

  test("TextStylesMixed's last run reuses dictionary 2 by number (`iI` ref, 02, 07, then the root's end)", () => {
    const blob = readFixture("TextStylesMixed");
    expect(Array.from(blob.subarray(-4))).toEqual([0x97, 0x02, 0x07, 0x86]);
  });

  test("Blank: empty text, no runs; the two nulls stay null", () => {
    expect(decodeBody(readFixture("Blank"))).toEqual({ text: "", runs: [] });
    expect(decodeBody(readFixture("HugeWithRefs"))).toBeNull();
    expect(decodeBody(readFixture("ExtraData"))).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------
// Hand-made attribute sections on the layout of encodeAttributedBody("hi"). Its tables before the runs:
// strings "@" 92, NSAttributedString 93, NSObject 94, NSString 95, "+" 96; objects root 92,
// NSAttributedString 93, NSObject 94, the text 95, NSString 96. The next string is 97, the next object 97.

const HI = encodeAttributedBody("hi");
const RUNS_AT = indexOfBytes(HI, [0x84, 0x02, 0x69, 0x49]);
const NEW_II = [0x84, 0x02, 0x69, 0x49];
/** "hi" followed by `section` as the root's remaining values, then the root's end. */
const hiWith = (...section: number[]): Uint8Array =>
  concat(HI.subarray(0, RUNS_AT), Uint8Array.from(section), bytes(0x86));
const NULL_RUN = { text: "hi", runs: [run([0, 2, null])] };
/** A new class (new name string) of version 0; its superclass follows. */
const newClass = (name: string): number[] => [0x84, 0x84, name.length, ...utf8(name), 0x00];
/** A new NSString object (class NSString 96, type "+" 96). */
const newString = (s: string): number[] => [0x84, 0x96, 0x96, s.length, ...utf8(s), 0x86];
/**
 * After NEW_II ("iI" = string 97): `@` then a new NSDictionary { part: 7 } (new strings NSDictionary 98,
 * "i" 99, NSNumber 9a, NSValue 9b, "*" 9c).
 */
const DICT7 = [
  [0x92, 0x84, ...newClass("NSDictionary"), 0x94], // "@": new object, new class NSDictionary < NSObject
  [0x84, 0x01, 0x69, 0x01], // new type "i": one entry
  [0x92, ...newString("__kIMMessagePartAttributeName")],
  [0x92, 0x84, ...newClass("NSNumber"), ...newClass("NSValue"), 0x94], // NSNumber < NSValue < NSObject
  [0x84, 0x01, 0x2a, 0x84, 0x99, 0x99, 0x07, 0x86], // new type "*": new C string "i"; type "i": 7; end
  [0x86], // end of the dictionary
].flat();

describe("attribute sections that cannot be read → the text as one run with nulls", () => {
  test("controls: the unmodified blob has part 0 over [0, 2); the hand-made section part 7", () => {
    expect(RUNS_AT).toBeGreaterThan(0);
    expect(decodeBody(HI)).toEqual({ text: "hi", runs: [run([0, 2, 0])] });
    expect(decodeBody(hiWith(...NEW_II, 0x01, 0x02, ...DICT7))).toEqual({
      text: "hi",
      runs: [run([0, 2, 7])],
    });
  });

  const cases: Array<[string, number[]]> = [
    ["no runs at all", []],
    ["a run overrunning the text", [...NEW_II, 0x01, 0x03, ...DICT7]],
    ["a run short of the text, then the end", [...NEW_II, 0x01, 0x01, ...DICT7]],
    ["an empty run", [...NEW_II, 0x01, 0x00, ...DICT7]],
    ["a run length of 0xFF (unsigned: 255)", [...NEW_II, 0x01, 0xff, ...DICT7]],
    ["dictionary number 0", [...NEW_II, 0x00, 0x02]],
    ["dictionary number 2 before dictionary 1", [...NEW_II, 0x02, 0x02, 0x92, 0x85]],
    ["a nil dictionary", [...NEW_II, 0x01, 0x02, 0x92, 0x85]],
    ["a string where the dictionary goes", [...NEW_II, 0x01, 0x02, 0x92, ...newString("x")]],
    ["a reference to the text object as the dictionary", [...NEW_II, 0x01, 0x02, 0x92, 0x95]],
    ["a reference past the object table", [...NEW_II, 0x01, 0x02, 0x92, 0xf0]],
    ["a reference past the string table", [0xf0, 0x01, 0x02]],
    ["a type string that is not an encoding", [0x84, 0x02, 0x69, 0x7a, 0x01, 0x02]],
    ["an unterminated struct encoding", [0x84, 0x03, 0x7b, 0x61, 0x3d, 0x01]],
    ["an integer head that is a tag", [...NEW_II, 0x83, 0x02]],
    [
      "a class whose superclass is itself (not an NSDictionary)",
      [...NEW_II, 0x01, 0x02, 0x92, 0x84, 0x84, 0x84, 0x05, ...utf8("NSFoo"), 0x00, 0x98, 0x86],
    ],
  ];
  test.each(cases)("%s", (_label, section) => {
    const blob = hiWith(...section);
    expect(decodeAttributedBody(blob)).toBe("hi");
    expect(decodeBody(blob)).toEqual(NULL_RUN);
  });

  test("values after the runs that cover the text", () => {
    const blob = concat(HI.subarray(0, -1), bytes(0x97, 0x01, 0x01, 0x86));
    expect(decodeBody(blob)).toEqual(NULL_RUN);
  });

  test("a part that is not an integer NSNumber is null, the run is kept", () => {
    // Replace the value `i` 0 of NSNumber by a `d` typed 1.5 (83 + 8 bytes): `*` "d", then "d" 1.5.
    const at = indexOfBytes(HI, [0x84, 0x01, 0x2a]); // type "*"
    const f64 = new Uint8Array(new Float64Array([1.5]).buffer);
    const blob = concat(
      HI.subarray(0, at + 3),
      bytes(0x84, 0x84, 0x01, 0x64, 0x9d, 0x83),
      f64,
      bytes(0x86, 0x86, 0x86),
    );
    expect(readTypedStream(blob)).not.toBeNull(); // read, not the fallback
    expect(decodeBody(blob)).toEqual({ text: "hi", runs: [run([0, 2, null])] });
  });

  test("nesting 10,000 objects deep and a [999999999!] array end quickly, not in a crash", () => {
    const deep = Array.from({ length: 10_000 }, () => [0x92, 0x84, 0x94]).flat();
    const started = performance.now();
    expect(decodeBody(hiWith(...NEW_II, 0x01, 0x02, ...deep))).toEqual(NULL_RUN);
    const bang = [0x84, 0x0c, ...utf8("[999999999!]")];
    expect(decodeBody(hiWith(...bang, ...NEW_II, 0x01, 0x02))).toEqual(NULL_RUN);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test("raw UTF-16LE (FF FE) text is one run with nulls", () => {
    expect(decodeBody(bytes(0xff, 0xfe, 0x68, 0x00, 0x69, 0x00))).toEqual(NULL_RUN);
  });

  test("null, undefined and non-bytes in → null out", () => {
    expect(decodeBody(null)).toBeNull();
    expect(decodeBody(undefined)).toBeNull();
    expect(decodeBody("hi" as unknown as Uint8Array)).toBeNull();
  });
});

describe("work stays linear in the blob (each case ends in well under a second)", () => {
  const u16 = (n: number): number[] => [0x81, n & 0xff, n >> 8];
  const timed = (blob: Uint8Array): ReturnType<typeof decodeBody> => {
    const started = performance.now();
    const body = decodeBody(blob);
    expect(performance.now() - started).toBeLessThan(500);
    return body;
  };

  test("20,000 C strings referring to one 30,000-byte shared string", () => {
    const cStrings = Array.from({ length: 20_000 }, () => [0x97, 0x84, 0x98]).flat();
    const big = [0x84, 0x84, ...u16(30_000), ...new Array<number>(30_000).fill(0x61)];
    expect(timed(hiWith(0x84, 0x01, 0x2a, ...big, ...cStrings))).toEqual(NULL_RUN);
  });

  test("a dictionary with 20,000 keys referring to one 30,000-byte NSString", () => {
    const bigKey = [0x92, 0x84, 0x96, 0x96, ...u16(30_000), ...new Array<number>(30_000).fill(0x61), 0x86];
    const pairs = Array.from({ length: 20_000 }, () => [0x92, 0x99, 0x92, 0x99]).flat();
    const dictionary = [0x92, 0x84, ...newClass("NSDictionary"), 0x94, 0x84, 0x01, 0x69, ...u16(20_001)];
    const blob = hiWith(...NEW_II, 0x01, 0x02, ...dictionary, ...bigKey, 0x92, 0x99, ...pairs, 0x86);
    expect(timed(blob)).toEqual({ text: "hi", runs: [run([0, 2, null])] });
    expect(readTypedStream(blob)).not.toBeNull(); // read, not the fallback
  });

  test("an array of 99,999 structs with a 20,000-character name", () => {
    const encoding = `[99999{${"a".repeat(20_000)}=}]`;
    expect(timed(hiWith(0x84, ...u16(encoding.length), ...utf8(encoding)))).toEqual(NULL_RUN);
  });
});

describe("back-references", () => {
  const A = { part: 0, fileTransferGuid: null, audioTranscription: null };
  const B = { part: 1, fileTransferGuid: "G", audioTranscription: null };
  const body = {
    text: `ab${FFFC}d`,
    runs: [
      { start: 0, end: 2, ...A },
      { start: 2, end: 3, ...B },
      { start: 3, end: 4, ...A },
    ],
  };

  test("a run reusing dictionary 1 by number", () => {
    const blob = encodeBody(body);
    expect(Array.from(blob.subarray(-4))).toEqual([0x97, 0x01, 0x01, 0x86]);
    expect(decodeBody(blob)).toEqual(body);
  });

  test("a new dictionary number whose object is a reference to dictionary 1's object (97)", () => {
    const blob = concat(encodeBody(body).subarray(0, -4), bytes(0x97, 0x03, 0x01, 0x92, 0x97, 0x86));
    expect(decodeBody(blob)).toEqual(body);
  });

  test("Node Buffer input decodes the same as a plain Uint8Array", () => {
    const blob = encodeBody(body);
    expect(decodeBody(Buffer.from(blob))).toEqual(decodeBody(blob));
  });
});
