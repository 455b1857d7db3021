/**
 * What a Messages row says now (extensions.md §5), pure. Unsent: any of `is_empty = 1` (with no attachment
 * announced), `date_retracted` set, a summary whose `rp` lists every part, an edited row whose body (and
 * summary) holds no text and no attachment. Otherwise its text: the body's parts (a line break where a placeholder stood between two),
 * without the parts the summary lists as retracted (by the body's part runs, else the summary's part
 * ranges); where the body holds no text, each part's latest edit from the summary; and a voice message's
 * transcript (the body's IMAudioTranscription) when it has no other text.
 */
import type { ChatDbRow } from "./chat-db.ts";
import { visibleText } from "./rows.ts";
import { allRetracted, latestTexts, type SummaryInfo, someRetracted, summaryOf } from "./summary-info.ts";
import { type BodyRun, decodeAttributedBody, decodeBody } from "./typedstream.ts";

export interface RowContent {
  /** The sender took it back (whole). */
  unsent: boolean;
  /** Some of its parts were unsent, the rest stays: an edit. */
  partlyUnsent: boolean;
  /** What a person reads; null when no body could be read. */
  text: string | null;
  /** The body as kept (retracted parts out), placeholders included: the attachments it announces. */
  stored: string | null;
  /** `text` is a voice message's transcript. */
  transcript: boolean;
}

type Row = Pick<ChatDbRow, "text" | "body" | "is_empty" | "date_edited" | "date_retracted" | "summary">;

const PLACEHOLDER = "\uFFFC";
const hasText = (s: string | null): s is string => s !== null && visibleText(s).trim() !== "";

/** A body's text, and its attribute runs read only when asked (decodeBody, once). */
interface RowBody {
  text: string;
  runs(): BodyRun[];
}

const NO_RUNS = (): BodyRun[] => [];

/**
 * The body: the `text` column when it has content (older rows), else the decoded `attributedBody`. Only a
 * partly unsent row or one without text (a voice message) needs the runs, so the typedstream's full
 * read waits for them: catching up, most rows are read for their text alone (decodeBody for every row
 * cost a fifth of the catch-up rate).
 */
function bodyOf(row: Row): RowBody | null {
  const plain = row.text ?? "";
  if (hasText(plain)) return { text: plain, runs: NO_RUNS };
  const blob = row.body;
  const text = decodeAttributedBody(blob);
  if (text === null || !(blob instanceof Uint8Array))
    return row.text === null ? null : { text: plain, runs: NO_RUNS };
  let runs: BodyRun[] | undefined;
  return { text, runs: () => (runs ??= decodeBody(blob)?.runs ?? []) };
}

/** The body without the retracted parts: by its part runs, else by the summary's ranges, else as it is. */
function withoutRetracted(body: RowBody, s: SummaryInfo): string {
  const gone = new Set(s.retracted);
  const runs = body.runs();
  if (runs.some((r) => r.part !== null))
    return runs
      .filter((r) => r.part === null || !gone.has(r.part))
      .map((r) => body.text.slice(r.start, r.end))
      .join("");
  const ranges = [...(s.parts ?? new Map())].filter(([i]) => gone.has(i)).map(([, r]) => r);
  if (ranges.length === 0) return body.text;
  let out = "";
  for (let i = 0; i < body.text.length; i++)
    if (!ranges.some((r) => i >= r.lo && i < r.lo + r.le)) out += body.text[i];
  return out;
}

/** The transcripts a voice message's body carries, in order. */
const transcriptsOf = (body: RowBody | null): string[] =>
  (body?.runs() ?? []).flatMap((r) => (r.audioTranscription?.trim() ? [r.audioTranscription] : []));

const UNSENT: RowContent = { unsent: true, partlyUnsent: false, text: null, stored: null, transcript: false };

export function rowContent(row: Row): RowContent {
  const summary = summaryOf(row.summary, decodeAttributedBody);
  if ((row.date_retracted ?? 0) > 0 || (summary !== null && allRetracted(summary))) return UNSENT;
  const body = bodyOf(row);
  // is_empty counts unless the body still announces an attachment (never drop a photo on a flag alone).
  if (row.is_empty === 1 && !(body?.text ?? "").includes(PLACEHOLDER)) return UNSENT;
  const partlyUnsent = summary !== null && someRetracted(summary);
  const stored = body === null ? null : partlyUnsent && summary ? withoutRetracted(body, summary) : body.text;
  const edited = (row.date_edited ?? 0) > 0 || partlyUnsent;
  if (hasText(stored))
    return { unsent: false, partlyUnsent, text: visibleText(stored), stored, transcript: false };
  const transcripts = transcriptsOf(body);
  if (transcripts.length > 0)
    return { unsent: false, partlyUnsent, text: transcripts.join("\n"), stored, transcript: true };
  const latest =
    edited && summary
      ? latestTexts(summary)
          .map(visibleText)
          .filter((t) => t.trim() !== "")
      : [];
  if (latest.length > 0)
    return { unsent: false, partlyUnsent, text: latest.join("\n"), stored, transcript: false };
  if (edited && !(stored ?? "").includes(PLACEHOLDER)) return UNSENT;
  return {
    unsent: false,
    partlyUnsent,
    text: stored === null ? null : visibleText(stored),
    stored,
    transcript: false,
  };
}

/**
 * What a row that may have changed now says (row-content.ts, extensions.md §5): unsent, or, when it was
 * edited (an edit time) or partly unsent, its current text; null for a row that says neither.
 */
export function editOf(row: Row): { kind: "delete" } | { kind: "edit"; text: string } | null {
  const c = rowContent(row);
  if (c.unsent) return { kind: "delete" };
  const edited = (row.date_edited ?? 0) > 0 || c.partlyUnsent;
  return edited && c.text !== null ? { kind: "edit", text: c.text } : null;
}
