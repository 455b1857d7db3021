/**
 * The `attributedBody` and `message_summary_info` of rows as Messages writes them (pure; gw's own chat.db
 * writer for the demo and the tests, never a real chat.db; extensions.md §5, docs/IMESSAGE-ROWS.md). A
 * message's parts are its attachments and text pieces in order, each a part run; an edit keeps each part's
 * history in `ec` (the original first, the newest last, also written to the body) and lists the part in
 * `ep`; an unsend empties the body and lists every part in `rp` (no `ec`); a partial unsend lists some.
 */
import { readBinaryPlist } from "../connectors/device-messenger/bplist.ts";
import {
  type Body,
  composeBody,
  decodeBody,
  encodeAttributedBody,
} from "../connectors/device-messenger/typedstream.ts";
import { type PlistInput, writeBinaryPlist } from "./bplist-writer.ts";

const APPLE_EPOCH_MS = 978_307_200_000;
const PLACEHOLDER = "\uFFFC";

/** One piece of a message body: text, or an attachment (by its GUID), with a voice transcript maybe. */
export type Piece = { text: string } | { attachmentGuid: string; transcript?: string };

/** The body of pieces in order, each its own part (a transcript rides on its attachment's run). */
export function bodyOf(pieces: readonly Piece[]): Body {
  return composeBody(
    pieces.map((p, part) =>
      "text" in p
        ? { text: p.text, part }
        : {
            text: PLACEHOLDER,
            part,
            fileTransferGuid: p.attachmentGuid,
            audioTranscription: p.transcript ?? null,
          },
    ),
  );
}

type Summary = Record<string, PlistInput>;

/** A stored summary as a plain dict (none, or one that does not read: an empty one). */
function summaryDict(blob: Uint8Array | null): Summary {
  const v = blob ? readBinaryPlist(blob) : null;
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array)
    ? (v as Summary)
    : {};
}

/** `otr`: each part's range in the body (UTF-16 units), from its part runs (no runs: one part). */
function partRanges(body: Body | null): Summary {
  const ranges: Summary = {};
  for (const r of body?.runs ?? []) {
    const key = String(r.part ?? 0);
    const known = ranges[key] as { lo: number; le: number } | undefined;
    ranges[key] = known ? { lo: known.lo, le: r.end - known.lo } : { lo: r.start, le: r.end - r.start };
  }
  if (Object.keys(ranges).length === 0) ranges["0"] = { lo: 0, le: body?.text.length ?? 0 };
  return ranges;
}

const seconds = (epochMs: number) => (epochMs - APPLE_EPOCH_MS) / 1000;

/** A row's stored state, as an edit or an unsend reads it. */
export interface StoredRow {
  body: Uint8Array | null;
  text: string | null;
  summary: Uint8Array | null;
  /** The message's own date (epoch ms): the original's entry in a first edit's history. */
  dateMs: number;
}

/** An edit of a one-part message to `text` at `nowMs`: the new body and summary (history appended). */
export function editedColumns(old: StoredRow, text: string, nowMs: number) {
  const previous = decodeBody(old.body)?.text ?? old.text ?? "";
  const summary = summaryDict(old.summary);
  const ec = (summary.ec ?? {}) as Record<string, PlistInput[]>;
  const history = ec["0"] ?? [{ t: encodeAttributedBody(previous), d: seconds(old.dateMs) }];
  return {
    attributedBody: encodeAttributedBody(text),
    message_summary_info: writeBinaryPlist({
      amc: 0,
      ust: true,
      ...summary,
      otr: { "0": { lo: 0, le: text.length } },
      ec: { ...ec, "0": [...history, { t: encodeAttributedBody(text), d: seconds(nowMs) }] },
      ep: [0],
    }),
  };
}

/** A whole unsend: the body an empty string, every part retracted, no history. */
export function unsentColumns(old: StoredRow) {
  const body = decodeBody(old.body);
  const otr = partRanges(body);
  return {
    attributedBody: encodeAttributedBody(""),
    message_summary_info: writeBinaryPlist({ amc: 0, ust: true, otr, rp: Object.keys(otr).map(Number) }),
  };
}

/** Some parts unsent: listed in `rp` (the body is left as it was: gw drops their runs itself). */
export function partlyUnsentColumns(old: StoredRow, parts: readonly number[]) {
  const summary = summaryDict(old.summary);
  const rp = [...new Set([...((summary.rp as number[] | undefined) ?? []), ...parts])].sort((a, b) => a - b);
  return {
    message_summary_info: writeBinaryPlist({
      amc: 0,
      ust: true,
      ...summary,
      otr: partRanges(decodeBody(old.body)),
      rp,
    }),
  };
}
