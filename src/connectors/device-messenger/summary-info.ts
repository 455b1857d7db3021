/**
 * `message.message_summary_info` (a bplist00) read as a message's edit/unsend history; pure, never throws
 * (extensions.md §5, chatdb.md §5). `otr` gives the parts, `rp` the retracted (unsent) ones, `ep` the
 * edited ones, `ec` each part's history, oldest first, its texts decoded by the injected typedstream
 * decoder. A field of the wrong type is ignored on its own; only an unreadable blob or a non-dict gives null.
 */
import { readBinaryPlist } from "./bplist.ts";

/** A part's range in the body text, in UTF-16 units (`otr` → `lo`, `le`). */
export interface PartRange {
  readonly lo: number;
  readonly le: number;
}

/** One version of a part (`ec` entry): its text (null when `t` is missing or undecodable) and time. */
export interface PartVersion {
  readonly text: string | null;
  /** `d` (seconds since 2001-01-01 UTC) as epoch ms, floored; null when `d` is missing or not a number. */
  readonly dateMs: number | null;
}

export interface SummaryInfo {
  /** `otr` by part index, ascending; null when `otr` is absent or not a dict. */
  readonly parts: ReadonlyMap<number, PartRange> | null;
  /** `rp`: retracted (unsent) part indexes, ascending, without duplicates. */
  readonly retracted: readonly number[];
  /** `ep`: edited part indexes, ascending, without duplicates. */
  readonly edited: readonly number[];
  /** `ec` by part index, ascending; each list oldest first (the last is the current text), never empty. */
  readonly history: ReadonlyMap<number, readonly PartVersion[]>;
}

export type DecodeText = (t: Uint8Array) => string | null;

const APPLE_EPOCH_MS = 978_307_200_000;
const INDEX_KEY = /^(?:0|[1-9][0-9]{0,8})$/;

type Dict = Readonly<Record<string, unknown>>;

const isDict = (v: unknown): v is Dict =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

const isIndex = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The dict's entries whose keys are part indexes ("0", "1", …), ascending by index. */
function indexed(v: unknown): [number, unknown][] {
  if (!isDict(v)) return [];
  const entries = Object.entries(v).filter(([k]) => INDEX_KEY.test(k));
  return entries.map(([k, x]): [number, unknown] => [Number(k), x]).sort((a, b) => a[0] - b[0]);
}

function indexList(v: unknown): number[] {
  if (!Array.isArray(v)) return [];
  return [...new Set(v.filter(isIndex))].sort((a, b) => a - b);
}

function partsOf(otr: unknown): Map<number, PartRange> | null {
  if (!isDict(otr)) return null;
  const parts = new Map<number, PartRange>();
  for (const [index, range] of indexed(otr)) {
    if (isDict(range) && isIndex(range.lo) && isIndex(range.le))
      parts.set(index, { lo: range.lo, le: range.le });
  }
  return parts;
}

function dateMsOf(d: unknown): number | null {
  if (typeof d !== "number" || !Number.isFinite(d)) return null;
  const ms = Math.floor(d * 1000) + APPLE_EPOCH_MS;
  return Number.isSafeInteger(ms) ? ms : null;
}

function textOf(t: unknown, decodeText: DecodeText): string | null {
  if (!(t instanceof Uint8Array)) return null;
  try {
    const text = decodeText(t);
    return typeof text === "string" ? text : null;
  } catch {
    return null;
  }
}

function historyOf(ec: unknown, decodeText: DecodeText): Map<number, PartVersion[]> {
  const history = new Map<number, PartVersion[]>();
  for (const [index, list] of indexed(ec)) {
    if (!Array.isArray(list)) continue;
    const versions = list
      .filter(isDict)
      .map((e) => ({ text: textOf(e.t, decodeText), dateMs: dateMsOf(e.d) }));
    if (versions.length > 0) history.set(index, versions);
  }
  return history;
}

/** Reads a `message_summary_info` blob; null when it is absent, not a bplist, or its top is not a dict. */
export function summaryOf(blob: Uint8Array | null | undefined, decodeText: DecodeText): SummaryInfo | null {
  if (!(blob instanceof Uint8Array) || blob.length === 0) return null;
  const top = readBinaryPlist(blob);
  if (!isDict(top)) return null;
  return {
    parts: partsOf(top.otr),
    retracted: indexList(top.rp),
    edited: indexList(top.ep),
    history: historyOf(top.ec, decodeText),
  };
}

const knownParts = (s: SummaryInfo): number[] => (s.parts ? [...s.parts.keys()] : []);

/**
 * Whether the whole message was unsent: `rp` lists every part of `otr`. When `otr` is absent or lists
 * no valid part, the part list is unknown and any retracted part counts as the whole message (real unsent
 * rows always carry `otr`; the reader's own checks of the body still apply).
 */
export function allRetracted(s: SummaryInfo): boolean {
  if (s.retracted.length === 0) return false;
  const parts = knownParts(s);
  return parts.length === 0 || parts.every((i) => s.retracted.includes(i));
}

/** Whether some but not all parts of `otr` were unsent (such a message is edited, not deleted). */
export function someRetracted(s: SummaryInfo): boolean {
  return knownParts(s).some((i) => s.retracted.includes(i)) && !allRetracted(s);
}

/**
 * The current text of each part with a history, in part order: the last version's text. Parts in `rp`
 * are left out, and so is a part whose last version has no decodable text (an older one never stands in).
 */
export function latestTexts(s: SummaryInfo): string[] {
  const texts: string[] = [];
  for (const [index, versions] of s.history) {
    const text = versions[versions.length - 1]?.text;
    if (!s.retracted.includes(index) && typeof text === "string") texts.push(text);
  }
  return texts;
}
