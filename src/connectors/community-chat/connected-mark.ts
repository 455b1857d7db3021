/**
 * The connected mark: a snowflake before which every message in a channel the bot can read reached gw
 * (stored, or older than anything gw ever imported); catch-up of channels gw has not stored yet starts there.
 * Kept in connector_cursors, written through ingest like every cursor. It only moves forward, only while the
 * link is ready and no catch-up is pending or failed. Written every `everyMs`, when a catch-up ends and at a
 * clean stop; after a kill -9 the last one is early, which costs only a few requests.
 */
import type { Clock, Logger } from "../../core/ports.ts";
import type { Ingest } from "../../ingest/ingest.ts";
import { isLater, snowflakeAt } from "./snowflake.ts";

/** The mark's key in connector_cursors. */
export const MARK_SOURCE = "community_chat";

/**
 * The mark to write now, or null when the stored one stays (pure): the earlier of now and the last
 * acknowledged heartbeat, less `marginMs` (messages still on their way, clocks apart), and before every
 * message received but not yet stored. The very first mark is now, the moment the first session's catch-up
 * ended: history from before gw ran is not imported.
 */
export function nextMark(q: {
  stored: string | null;
  now: number;
  /** When the last acknowledged heartbeat was sent (null: none yet on this link). */
  lastAckAt: number | null;
  marginMs: number;
  /** The oldest message received but not yet stored. */
  oldestUnsettled: string | null;
}): string | null {
  let base: number;
  if (q.stored === null) base = q.now;
  else if (q.lastAckAt === null) return null;
  else base = Math.min(q.now, q.lastAckAt) - q.marginMs;
  let mark = snowflakeAt(base);
  if (q.oldestUnsettled !== null && !isLater(q.oldestUnsettled, mark))
    mark = (BigInt(q.oldestUnsettled) - 1n).toString();
  return q.stored === null || isLater(mark, q.stored) ? mark : null;
}

export interface MarkDeps {
  read: () => string | null;
  clock: Clock;
  log: Logger;
  everyMs: number;
  marginMs: number;
  /** Link ready and nothing pending or failed in catch-up. */
  canAdvance: () => boolean;
  lastAckAt: () => number | null;
}

export function createConnectedMark(d: MarkDeps) {
  let ingest: Ingest | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  /** Set when a stop began: only the closing write may move the mark then. */
  let closed = false;
  /** Messages received and not yet stored, by snowflake (a count, in case one comes twice). */
  const unsettled = new Map<string, number>();

  const oldestUnsettled = (): string | null => {
    let oldest: string | null = null;
    for (const id of unsettled.keys()) if (oldest === null || isLater(oldest, id)) oldest = id;
    return oldest;
  };

  const write = (now: number, lastAckAt: number | null): void => {
    if (!ingest) return;
    try {
      const mark = nextMark({
        stored: d.read(),
        now,
        lastAckAt,
        marginMs: d.marginMs,
        oldestUnsettled: oldestUnsettled(),
      });
      if (mark !== null) ingest({ source: MARK_SOURCE, messages: [], cursor: mark });
    } catch (err) {
      d.log.warn({ err: String(err) }, "could not store the Discord connected mark; trying again later");
    }
  };

  /** Writes the mark if it may move now. */
  const refresh = (): void => {
    if (!closed && d.canAdvance()) write(d.clock.now(), d.lastAckAt());
  };

  return {
    /** The stored mark. */
    current: d.read,
    start(target: Ingest): void {
      ingest = target;
      timer = setInterval(refresh, d.everyMs);
    },
    refresh,
    received(id: string): void {
      unsettled.set(id, (unsettled.get(id) ?? 0) + 1);
    },
    settled(id: string): void {
      const n = (unsettled.get(id) ?? 1) - 1;
      if (n > 0) unsettled.set(id, n);
      else unsettled.delete(id);
    },
    /**
     * Stops the timer and notes whether the mark may move and where the link stood; the returned
     * function writes it once what can be stored is (messages not stored by then hold it back).
     */
    closing(): () => void {
      if (timer) clearInterval(timer);
      timer = null;
      closed = true;
      const may = d.canAdvance();
      const now = d.clock.now();
      const lastAckAt = d.lastAckAt();
      return () => {
        if (may) write(now, lastAckAt);
        ingest = null;
      };
    },
  };
}

export type ConnectedMark = ReturnType<typeof createConnectedMark>;
