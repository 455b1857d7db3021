/**
 * row-content.ts: what a Messages row says now (extensions.md §5), on rows shaped as real Macs write them
 * (bodies with part runs, message_summary_info plists written the way Messages writes them): every unsent
 * signature alone and together, edits from the body or from the summary's history, partial unsends, parts
 * around inline attachments, voice transcripts.
 */
import { describe, expect, test } from "bun:test";
import { editOf, rowContent } from "../../src/connectors/device-messenger/row-content.ts";
import {
  composeBody,
  encodeAttributedBody,
  encodeBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { writeBinaryPlist } from "../../src/demo/bplist-writer.ts";

const GUID = "D0551D89-4E11-43D0-9A0E-06F19704E97B";
type Row = Parameters<typeof rowContent>[0];
const row = (over: Partial<Row> = {}): Row => ({
  text: null,
  body: encodeAttributedBody("hello there"),
  is_empty: 0,
  date_edited: null,
  date_retracted: null,
  summary: null,
  ...over,
});
const plist = (v: Parameters<typeof writeBinaryPlist>[0]) => writeBinaryPlist(v);
/** The summary of a real unsent one-part message (no `ec`). */
const UNSENT_SUMMARY = plist({ amc: 0, ust: true, otr: { "0": { lo: 0, le: 13 } }, rp: [0] });
/** An empty-string body, as a real unsent row keeps. */
const EMPTY_BODY = encodeAttributedBody("");
const history = (...texts: string[]) =>
  texts.map((t, i) => ({ t: encodeAttributedBody(t), d: 690513474 + i * 6 }));

describe("unsent: every signature alone", () => {
  test.each([
    [
      "the real shape: an empty body and a summary listing every part in rp",
      { body: EMPTY_BODY, summary: UNSENT_SUMMARY },
    ],
    ["rp lists every part, the body still holding the text", { summary: UNSENT_SUMMARY }],
    ["date_retracted set, nothing else", { date_retracted: 1_780_000_000_000 }],
    ["is_empty = 1 (the older shape), body cleared", { is_empty: 1, body: null }],
    [
      "an edit time and a body with no text and no attachment",
      { date_edited: 1_780_000_000_000, body: EMPTY_BODY },
    ],
  ])("%s", (_, over) => {
    expect(rowContent(row(over))).toMatchObject({ unsent: true, text: null });
    expect(editOf(row(over))).toEqual({ kind: "delete" });
  });
  test("together, and after date_retracted is cleared again: still unsent", () => {
    const all = { body: EMPTY_BODY, summary: UNSENT_SUMMARY, date_retracted: 1, date_edited: 1, is_empty: 1 };
    expect(rowContent(row(all)).unsent).toBe(true);
    expect(rowContent(row({ ...all, date_retracted: null })).unsent).toBe(true);
  });
  test("is_empty alone never drops a message whose body announces an attachment", () => {
    const photo = encodeBody(composeBody([{ text: "\uFFFC", part: 0, fileTransferGuid: GUID }]));
    expect(rowContent(row({ is_empty: 1, body: photo }))).toMatchObject({ unsent: false, text: "" });
  });
  test("a fresh row with no sign is no change", () => {
    expect(rowContent(row())).toMatchObject({ unsent: false, text: "hello there", transcript: false });
    expect(editOf(row())).toBeNull();
  });
});

describe("edited", () => {
  test("the body holds the newest text", () => {
    const r = row({
      date_edited: 1_780_000_000_000,
      body: encodeAttributedBody("Edited message"),
      summary: plist({
        ec: { "0": history("First message", "Edited message") },
        ep: [0],
        otr: { "0": { lo: 0, le: 14 } },
      }),
    });
    expect(editOf(r)).toEqual({ kind: "edit", text: "Edited message" });
  });
  test("a body with no text: each part's latest edit from the summary, in part order", () => {
    const r = row({
      date_edited: 1_780_000_000_000,
      body: null,
      summary: plist({
        ec: { "1": history("two", "TWO"), "0": history("one", "ONE") },
        ep: [0, 1],
        otr: { "0": { lo: 0, le: 3 }, "1": { lo: 3, le: 3 } },
      }),
    });
    expect(editOf(r)).toEqual({ kind: "edit", text: "ONE\nTWO" });
  });
});

describe("partly unsent: an edit whose text is the remaining parts", () => {
  const parts = composeBody([
    { text: "keep this", part: 0 },
    { text: "\uFFFC", part: 1, fileTransferGuid: GUID },
    { text: "take this back", part: 2 },
  ]);
  const summary = plist({
    otr: { "0": { lo: 0, le: 9 }, "1": { lo: 9, le: 1 }, "2": { lo: 10, le: 14 } },
    rp: [2],
  });
  test("by the body's part runs", () => {
    const r = row({ body: encodeBody(parts), summary });
    expect(rowContent(r)).toMatchObject({
      unsent: false,
      partlyUnsent: true,
      text: "keep this",
      stored: "keep this\uFFFC",
    });
    expect(editOf(r)).toEqual({ kind: "edit", text: "keep this" });
  });
  test("by the summary's ranges when the body has no part runs", () => {
    const r = row({ text: parts.text, body: null, summary });
    expect(editOf(r)).toEqual({ kind: "edit", text: "keep this" });
  });
});

describe("text fidelity", () => {
  test("parts around inline attachments stay apart", () => {
    const body = composeBody([
      { text: "test 1", part: 0 },
      { text: "\uFFFC", part: 1, fileTransferGuid: GUID },
      { text: "test 2", part: 2 },
    ]);
    expect(rowContent(row({ body: encodeBody(body) })).text).toBe("test 1\ntest 2");
  });
  test("a voice message: the transcript is the text", () => {
    const body = composeBody([
      { text: "\uFFFC", part: 0, fileTransferGuid: GUID, audioTranscription: "Call me back" },
    ]);
    expect(rowContent(row({ body: encodeBody(body) }))).toMatchObject({
      text: "Call me back",
      transcript: true,
      stored: "\uFFFC",
    });
  });
  test("a voice message with text of its own keeps its text", () => {
    const body = composeBody([
      { text: "listen", part: 0 },
      { text: "\uFFFC", part: 1, fileTransferGuid: GUID, audioTranscription: "Call me back" },
    ]);
    expect(rowContent(row({ body: encodeBody(body) }))).toMatchObject({ text: "listen", transcript: false });
  });
});
