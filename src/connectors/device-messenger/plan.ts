/**
 * What one read of chat.db does with its rows (pure; chatdb.md §7–8): which are delivered, fenced or left
 * pending, and where the cursor moves. Pending rows come first, then the rows after the cursor, in ROWID
 * order. A row waiting for its attachments never holds the cursor but holds every later row of its chat, so
 * each chat stays in order; it goes out when they are ready, or after `waitMs` without them (`late`).
 * Tapbacks become reactions, except old ones re-inserted by iCloud (dated past the fence).
 */
import type { ChatDbAttachment, ChatDbRow } from "./chat-db.ts";
import { classifyRow } from "./rows.ts";

/**
 * The high-water date (the given one included, which may come from a "Send Later" row at the tail) counts
 * dates only up to `now + FUTURE_SLACK_MS`, so one row from a wrong clock cannot fence everything after it.
 */
export const FUTURE_SLACK_MS = 5 * 60_000;

export interface PendingEntry {
  rowid: number;
  /** When the row was first seen waiting (epoch ms). */
  since: number;
}

export interface RowInput {
  row: ChatDbRow;
  /** Its attachments, hidden ones left out. */
  attachments: ChatDbAttachment[];
  /** Its visible text (row-content.ts), decoded once. */
  text: string | null;
  /** The row says the message was unsent already: nothing to deliver. */
  unsent?: boolean;
  /** `text` is a voice message's transcript. */
  transcript?: boolean;
  /** How many attachments the body announces (its U+FFFC count). */
  announced: number;
  /** Every announced attachment is joined and ready to copy. */
  ready: boolean;
  /** A new row without its chat join, still within the wait: the read stops here. */
  holdForChat?: boolean;
}

export interface PlanInput {
  waiting: readonly RowInput[];
  fresh: readonly RowInput[];
  pending: readonly PendingEntry[];
  highWater: number | null;
  now: number;
  fenceMs: number;
  waitMs: number;
}

export interface Plan {
  /** In ROWID order; `late` ones go out without the attachments that never became ready. */
  deliver: { input: RowInput; late: boolean }[];
  /** Tapback rows consumed (not fenced), in ROWID order: they become reaction events. */
  reactions: ChatDbRow[];
  fenced: ChatDbRow[];
  pending: PendingEntry[];
  /** The last new row consumed (null: none). */
  cursor: number | null;
  highWater: number | null;
  /** The read stopped at a row waiting for its chat join. */
  held: boolean;
}

/**
 * A new row whose chat join has not landed yet (`holdForChat`) holds the read there: the cursor waits. A new
 * deliverable row dated more than `fenceMs` before the high-water date of the rows already read is iCloud
 * backfill: fenced, never delivered.
 */
export function planRead(p: PlanInput): Plan {
  const since = new Map(p.pending.map((e) => [e.rowid, e.since]));
  const blocked = new Set<string>();
  const deliver: Plan["deliver"] = [];
  const pending: PendingEntry[] = [];
  const fenced: ChatDbRow[] = [];
  const reactions: ChatDbRow[] = [];
  const wait = (input: RowInput, first: number) => {
    pending.push({ rowid: input.row.rowid, since: first });
    blocked.add(input.row.chat_guid ?? "");
  };

  for (const input of p.waiting) {
    const first = since.get(input.row.rowid) ?? p.now;
    const expired = p.now - first >= p.waitMs;
    if (blocked.has(input.row.chat_guid ?? "") || (!input.ready && !expired)) wait(input, first);
    else deliver.push({ input, late: !input.ready });
  }

  let cursor: number | null = null;
  const latest = p.now + FUTURE_SLACK_MS;
  let highWater = p.highWater === null ? null : Math.min(p.highWater, latest);
  let held = false;
  for (const input of p.fresh) {
    const { row } = input;
    if (input.holdForChat) {
      held = true;
      break;
    }
    cursor = row.rowid;
    const kind = classifyRow(
      row,
      Math.max(input.attachments.length, input.announced),
      input.text,
      input.unsent,
    );
    const deliverable = kind === "deliver";
    const old = p.fenceMs > 0 && highWater !== null && row.date_ms < highWater - p.fenceMs;
    if (deliverable && old) {
      fenced.push(row);
      continue;
    }
    const counted = Math.min(row.date_ms, latest);
    highWater = highWater === null ? counted : Math.max(highWater, counted);
    // An old tapback re-inserted by iCloud is no reaction now (and, not being a message, not counted).
    if (kind === "reaction" && !old) reactions.push(row);
    if (!deliverable) continue;
    if (blocked.has(row.chat_guid ?? "") || (!input.ready && p.waitMs > 0)) wait(input, p.now);
    else deliver.push({ input, late: !input.ready });
  }
  deliver.sort((a, b) => a.input.row.rowid - b.input.row.rowid);
  return { deliver, reactions, fenced, pending, cursor, highWater, held };
}
