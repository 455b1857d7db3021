/**
 * chatdb-bodies.ts: gw's own writer writes bodies and summaries in the shapes captured from real Macs
 * (docs/IMESSAGE-ROWS.md): a part run per piece, an edit's history with the original first, an unsend's
 * empty body with every part in rp and no ec, a partial unsend's rp.
 */
import { expect, test } from "bun:test";
import { readBinaryPlist } from "../../src/connectors/device-messenger/bplist.ts";
import {
  decodeAttributedBody,
  decodeBody,
  encodeBody,
} from "../../src/connectors/device-messenger/typedstream.ts";
import { bodyOf, editedColumns, partlyUnsentColumns, unsentColumns } from "../../src/demo/chatdb-bodies.ts";

const T0 = Date.UTC(2026, 10, 28, 12);
const GUID = "4C339597-EBBB-4978-9B87-521C0471A848";
const threeParts = bodyOf([{ text: "test 1" }, { attachmentGuid: GUID }, { text: "test 2" }]);

test("a part run per piece, the attachment's run naming its GUID, a transcript on a voice message's run", () => {
  expect(threeParts.text).toBe("test 1\uFFFCtest 2");
  expect(threeParts.runs.map((r) => [r.start, r.end, r.part, r.fileTransferGuid])).toEqual([
    [0, 6, 0, null],
    [6, 7, 1, GUID],
    [7, 13, 2, null],
  ]);
  const voice = bodyOf([{ attachmentGuid: GUID, transcript: "hi there" }]);
  expect(decodeBody(encodeBody(voice))?.runs[0]?.audioTranscription).toBe("hi there");
});

test("an edit: the new body, ec with the original first and the new text last, ep and otr", () => {
  const first = editedColumns(
    { body: encodeBody(bodyOf([{ text: "helo" }])), text: null, summary: null, dateMs: T0 },
    "hello",
    T0 + 5000,
  );
  expect(decodeAttributedBody(first.attributedBody)).toBe("hello");
  const s1 = readBinaryPlist(first.message_summary_info) as Record<string, unknown>;
  expect(s1).toMatchObject({ amc: 0, ust: true, ep: [0], otr: { "0": { lo: 0, le: 5 } } });
  const h1 = (s1.ec as Record<string, { t: Uint8Array; d: number }[]>)["0"] ?? [];
  expect(h1.map((e) => decodeAttributedBody(e.t))).toEqual(["helo", "hello"]);
  expect(h1.map((e) => e.d)).toEqual([(T0 - 978_307_200_000) / 1000, (T0 + 5000 - 978_307_200_000) / 1000]);
  const second = editedColumns(
    { body: first.attributedBody, text: null, summary: first.message_summary_info, dateMs: T0 },
    "hello!",
    T0 + 9000,
  );
  const h2 = (
    (readBinaryPlist(second.message_summary_info) as { ec: Record<string, { t: Uint8Array }[]> }).ec["0"] ??
    []
  ).map((e) => decodeAttributedBody(e.t));
  expect(h2).toEqual(["helo", "hello", "hello!"]);
});

test("an unsend: an empty-string body, every part in rp, no ec", () => {
  const u = unsentColumns({ body: encodeBody(threeParts), text: null, summary: null, dateMs: T0 });
  expect(decodeAttributedBody(u.attributedBody)).toBe("");
  expect(readBinaryPlist(u.message_summary_info)).toEqual({
    amc: 0,
    ust: true,
    otr: { "0": { lo: 0, le: 6 }, "1": { lo: 6, le: 1 }, "2": { lo: 7, le: 6 } },
    rp: [0, 1, 2],
  });
});

test("a partial unsend lists the parts in rp, keeping earlier ones", () => {
  const once = partlyUnsentColumns(
    { body: encodeBody(threeParts), text: null, summary: null, dateMs: T0 },
    [2],
  );
  const twice = partlyUnsentColumns(
    { body: encodeBody(threeParts), text: null, summary: once.message_summary_info, dateMs: T0 },
    [0],
  );
  expect(readBinaryPlist(twice.message_summary_info)).toMatchObject({ rp: [0, 2] });
});
