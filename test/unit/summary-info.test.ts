import { describe, expect, test } from "bun:test";
import { mulberry32 } from "../../bench/lib/stats.ts";
import {
  allRetracted,
  latestTexts,
  type SummaryInfo,
  someRetracted,
  summaryOf,
} from "../../src/connectors/device-messenger/summary-info.ts";
import {
  decodeAttributedBody,
  encodeAttributedBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { formatTimestamp } from "../../src/core/time.ts";
import { type PlistInput, writeBinaryPlist } from "../../src/demo/bplist-writer.ts";
import { factShapes, fromHex, PYTHON_BPLIST } from "../helpers/bplist-python.ts";

// ---------------------------------------------------------------------------------------------------
// helpers

const body = encodeAttributedBody;
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const read = (v: PlistInput): SummaryInfo | null => summaryOf(writeBinaryPlist(v), decodeAttributedBody);
const must = (v: PlistInput): SummaryInfo => {
  const s = read(v);
  if (!s) throw new Error("expected a summary");
  return s;
};
/** For the Python fixtures, whose `t` blobs are UTF-8 stand-ins. */
const utf8Text = (t: Uint8Array): string | null => new TextDecoder().decode(t);
const APPLE_EPOCH_MS = 978_307_200_000;

// The fact shapes of issue 30, their `t` blobs typedstream bodies as Messages writes them.
const { unsent: UNSENT, edited: EDITED, twoPart: TWO_PART } = factShapes(body);

// ---------------------------------------------------------------------------------------------------
// the fact shapes

describe("the shapes real Macs write", () => {
  test("an unsent message: otr and rp, no ec", () => {
    const s = must(UNSENT);
    expect(s).toEqual({
      parts: new Map([[0, { lo: 0, le: 13 }]]),
      retracted: [0],
      edited: [],
      history: new Map(),
    });
    expect(allRetracted(s)).toBe(true);
    expect(someRetracted(s)).toBe(false);
    expect(latestTexts(s)).toEqual([]);
  });

  test("an edited message: four versions, oldest first, dates in epoch ms (floored)", () => {
    const s = must(EDITED);
    expect(s.parts).toEqual(new Map([[0, { lo: 0, le: 15 }]]));
    expect(s.edited).toEqual([0]);
    expect(s.retracted).toEqual([]);
    expect(s.history).toEqual(
      new Map([
        [
          0,
          [
            { text: "First version", dateMs: 1668820674272 },
            { text: "Second", dateMs: 1668820680468 },
            { text: "Third", dateMs: 1668820685250 },
            { text: "Final version!!", dateMs: 1668820694012 },
          ],
        ],
      ]),
    );
    expect(formatTimestamp(s.history.get(0)?.[0]?.dateMs as number)).toBe("2022-11-19T01:17:54.272Z");
    expect(allRetracted(s)).toBe(false);
    expect(someRetracted(s)).toBe(false);
    expect(latestTexts(s)).toEqual(["Final version!!"]);
  });

  test("a two-part message with its second part edited (bcg and euh ignored)", () => {
    const s = must(TWO_PART);
    expect(s.parts).toEqual(
      new Map([
        [0, { lo: 0, le: 1 }],
        [1, { lo: 1, le: 11 }],
      ]),
    );
    expect(s.edited).toEqual([1]);
    expect([...s.history.keys()]).toEqual([1]);
    expect(s.history.get(1)?.map((v) => v.text)).toEqual(["original", "edited text"]);
    expect(s.history.get(1)?.map((v) => v.dateMs)).toEqual([1668820674500, 1668820680750]);
    expect(latestTexts(s)).toEqual(["edited text"]);
    expect(allRetracted(s)).toBe(false);
  });

  test("the same shapes written by Python's plistlib read the same", () => {
    const unsent = summaryOf(fromHex(PYTHON_BPLIST.unsent), utf8Text);
    expect(unsent).toEqual(must(UNSENT));
    const edited = summaryOf(fromHex(PYTHON_BPLIST.edited), utf8Text);
    expect(edited).toEqual(must(EDITED));
    const twoPart = summaryOf(fromHex(PYTHON_BPLIST.twoPart), utf8Text);
    expect(twoPart).toEqual(must(TWO_PART));
  });
});

// ---------------------------------------------------------------------------------------------------
// retractions

describe("allRetracted / someRetracted", () => {
  const three = { "0": { lo: 0, le: 2 }, "1": { lo: 2, le: 3 }, "2": { lo: 5, le: 4 } };
  const cases: [string, PlistInput, boolean, boolean][] = [
    ["every part listed, out of order and repeated", { otr: three, rp: [2, 0, 1, 0] }, true, false],
    ["one part of three", { otr: three, rp: [1] }, false, true],
    ["two parts of three", { otr: three, rp: [0, 2] }, false, true],
    ["no rp", { otr: three }, false, false],
    ["an empty rp", { otr: three, rp: [] }, false, false],
    ["rp lists only parts otr does not have", { otr: three, rp: [3, 7] }, false, false],
    ["rp lists every part and one more", { otr: three, rp: [0, 1, 2, 3] }, true, false],
    ["no otr, rp non-empty: the part list is unknown, taken as all", { rp: [0] }, true, false],
    ["no otr, no rp", {}, false, false],
    ["otr of the wrong type, rp non-empty", { otr: [1, 2], rp: [1] }, true, false],
    ["otr with no valid part, rp non-empty", { otr: { a: { lo: 0, le: 1 } }, rp: [0] }, true, false],
    ["rp of the wrong type", { otr: three, rp: "0" }, false, false],
  ];
  for (const [name, v, all, some] of cases) {
    test(name, () => {
      const s = must(v);
      expect([allRetracted(s), someRetracted(s)]).toEqual([all, some]);
    });
  }

  test("a partial unsend: the remaining parts' texts, in part order", () => {
    const s = must({
      otr: three,
      rp: [1],
      ep: [0, 2],
      ec: {
        "2": [{ t: body("third"), d: 1.5 }],
        "1": [{ t: body("unsent"), d: 1.5 }],
        "0": [
          { t: body("frist"), d: 1.5 },
          { t: body("first"), d: 2.5 },
        ],
      },
    });
    expect([...s.history.keys()]).toEqual([0, 1, 2]);
    expect(latestTexts(s)).toEqual(["first", "third"]);
  });
});

// ---------------------------------------------------------------------------------------------------
// wrong types, field by field

describe("fields of the wrong type are ignored one by one", () => {
  test("rp and ep keep only non-negative integers, sorted, without duplicates", () => {
    const s = must({ rp: [3, "1", 1.5, -1, true, 0, 3, 2n ** 60n, [], {}], ep: [9, 2, 2, "x"] });
    expect(s.retracted).toEqual([0, 3]);
    expect(s.edited).toEqual([2, 9]);
  });

  test("rp, ep, otr and ec of the wrong type", () => {
    for (const wrong of ["x", 1, true, utf8("x"), [{}]] as PlistInput[]) {
      const s = must({ rp: wrong, ep: wrong, otr: wrong, ec: wrong });
      expect(s).toEqual({ parts: null, retracted: [], edited: [], history: new Map() });
    }
  });

  test("otr: parts with a bad key or a bad range are left out", () => {
    const s = must({
      otr: {
        "0": { lo: 0, le: 1 },
        "01": { lo: 0, le: 1 },
        "-1": { lo: 0, le: 1 },
        "1.5": { lo: 0, le: 1 },
        x: { lo: 0, le: 1 },
        "2": { lo: -1, le: 1 },
        "3": { lo: 0.5, le: 1 },
        "4": { lo: 0 },
        "5": { lo: "0", le: 1 },
        "6": [0, 1],
        "7": { lo: 3, le: 0, extra: "ignored" },
        "10000000000": { lo: 0, le: 1 },
      },
    });
    expect(s.parts).toEqual(
      new Map([
        [0, { lo: 0, le: 1 }],
        [7, { lo: 3, le: 0 }],
      ]),
    );
  });

  test("ec: entries that are not dicts are dropped; t and d of the wrong type become null", () => {
    const s = must({
      ec: {
        "0": ["x", 1, { t: "a string", d: "690513474" }, { d: 1.5 }, { t: body("ok") }, []],
        "1": "not a list",
        "2": [],
        "3": [7],
        a: [{ t: body("bad key"), d: 1 }],
      },
    });
    expect(s.history).toEqual(
      new Map([
        [
          0,
          [
            { text: null, dateMs: null },
            { text: null, dateMs: APPLE_EPOCH_MS + 1500 },
            { text: "ok", dateMs: null },
          ],
        ],
      ]),
    );
  });

  test("d: ints, negatives, and values too large to be a time", () => {
    const dates = (d: PlistInput) => must({ ec: { "0": [{ d }] } }).history.get(0)?.[0]?.dateMs;
    expect(dates(0)).toBe(APPLE_EPOCH_MS);
    expect(dates(-0.5)).toBe(APPLE_EPOCH_MS - 500);
    expect(dates(0.0015)).toBe(APPLE_EPOCH_MS + 1);
    expect(dates(1e300)).toBeNull();
    expect(dates(Number.NaN)).toBeNull();
    expect(dates(Number.POSITIVE_INFINITY)).toBeNull();
    expect(dates(2n ** 60n)).toBeNull();
    expect(dates(true)).toBeNull();
  });

  test("an undecodable t is null, and the part's older versions never stand in for it", () => {
    const s = must({
      otr: { "0": { lo: 0, le: 3 }, "1": { lo: 3, le: 3 } },
      ec: {
        "0": [
          { t: body("old"), d: 1 },
          { t: utf8("not a typedstream"), d: 2 },
        ],
        "1": [{ t: body("two"), d: 1 }],
      },
    });
    expect(s.history.get(0)?.map((v) => v.text)).toEqual(["old", null]);
    expect(latestTexts(s)).toEqual(["two"]);
  });

  test("a decoder that throws or returns a non-string gives null text, never a throw", () => {
    const blob = writeBinaryPlist(EDITED);
    const throwing = summaryOf(blob, () => {
      throw new Error("boom");
    });
    expect(throwing?.history.get(0)?.map((v) => v.text)).toEqual([null, null, null, null]);
    const odd = summaryOf(blob, () => 42 as unknown as string);
    expect(odd && latestTexts(odd)).toEqual([]);
  });

  test("an empty string is a text", () => {
    expect(latestTexts(must({ ec: { "0": [{ t: body(""), d: 1 }] } }))).toEqual([""]);
  });
});

// ---------------------------------------------------------------------------------------------------
// not a summary at all

describe("blobs that are not a summary give null", () => {
  const cases: [string, Uint8Array | null | undefined][] = [
    ["null", null],
    ["undefined", undefined],
    ["empty", new Uint8Array(0)],
    ["a typedstream", encodeAttributedBody("hello")],
    ["a truncated plist", writeBinaryPlist(UNSENT).subarray(0, 40)],
    ["a plist whose top is an array", writeBinaryPlist([UNSENT])],
    ["a plist whose top is a string", writeBinaryPlist("otr")],
    ["a plist whose top is data", writeBinaryPlist(utf8("x"))],
  ];
  for (const [name, blob] of cases)
    test(name, () => expect(summaryOf(blob, decodeAttributedBody)).toBeNull());

  test("an empty dict is a summary with nothing in it", () => {
    const s = must({});
    expect(s).toEqual({ parts: null, retracted: [], edited: [], history: new Map() });
    expect([allRetracted(s), someRetracted(s), latestTexts(s)]).toEqual([false, false, []]);
  });
});

test("fuzz: 3,000 seeded bit flips of the fact shapes never throw", () => {
  const rand = mulberry32(30);
  const seeds = [UNSENT, EDITED, TWO_PART].map((v) => writeBinaryPlist(v));
  let summaries = 0;
  for (let i = 0; i < 3000; i++) {
    const bytes = (seeds[i % seeds.length] as Uint8Array).slice();
    for (let f = 0, n = 1 + Math.floor(rand() * 3); f < n; f++) {
      const at = Math.floor(rand() * bytes.length);
      bytes[at] = (bytes[at] as number) ^ (1 << Math.floor(rand() * 8));
    }
    const s = summaryOf(bytes, decodeAttributedBody);
    if (s === null) continue;
    summaries++;
    allRetracted(s);
    someRetracted(s);
    for (const t of latestTexts(s)) expect(typeof t).toBe("string");
  }
  expect(summaries).toBeGreaterThan(100);
});
