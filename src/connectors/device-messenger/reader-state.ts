/**
 * What the iMessage reader keeps with its cursor (connector_cursors.state, JSON), pure: the backfill
 * fence's high-water date, the messages waiting for attachments, and the count of fenced rows. Parsing
 * is forgiving: a missing or damaged state reads as empty, field by field. Read by the poller and by
 * `gw doctor`, which must not load the poller for it.
 */
import type { PendingEntry } from "./plan.ts";

/** What the reader keeps with its cursor (connector_cursors.state). */
export interface ReaderState {
  highWater: number | null;
  pending: PendingEntry[];
  /** Rows fenced as iCloud backfill so far, and when the last one was. */
  fenced: number;
  fencedLastAt: number | null;
}

export const EMPTY_STATE: ReaderState = { highWater: null, pending: [], fenced: 0, fencedLastAt: null };

export function parseReaderState(text: string | null | undefined): ReaderState {
  if (!text) return { ...EMPTY_STATE };
  try {
    const s = JSON.parse(text) as Partial<ReaderState>;
    return {
      highWater: typeof s.highWater === "number" ? s.highWater : null,
      pending: Array.isArray(s.pending)
        ? s.pending.filter((p) => Number.isInteger(p?.rowid) && typeof p?.since === "number")
        : [],
      fenced: typeof s.fenced === "number" ? s.fenced : 0,
      fencedLastAt: typeof s.fencedLastAt === "number" ? s.fencedLastAt : null,
    };
  } catch {
    return { ...EMPTY_STATE };
  }
}
