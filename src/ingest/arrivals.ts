/**
 * Newly stored allowlisted inbound messages, announced to whoever is waiting for one: the unread long poll
 * (`GET /messages/unread?wait=`, decisions.md). Ingest publishes right after its commit. A waiter is a
 * pending promise and one timer, so a held request costs no CPU. Who has read what is not known here: a woken
 * waiter asks the store again.
 */
import type { Source } from "../core/envelope.ts";

export interface Arrival {
  source: Source;
  channelId: string;
  messageTs: number;
}

/** What a waiter waits for: the unread filters of its request (null: any). */
export interface ArrivalFilter {
  source: Source | null;
  channelId: string | null;
  /** Only messages with message_ts strictly greater. */
  sinceMs: number | null;
}

export type WaitOutcome = "arrived" | "timeout" | "full" | "closed";

/** Does this arrival match these filters? Pure. */
export function matches(f: ArrivalFilter, a: Arrival): boolean {
  return (
    (f.source === null || f.source === a.source) &&
    (f.channelId === null || f.channelId === a.channelId) &&
    (f.sinceMs === null || a.messageTs > f.sinceMs)
  );
}

export interface Arrivals {
  publish(arrivals: readonly Arrival[]): void;
  /**
   * "arrived" when a matching message is announced, "timeout" at the deadline or when `signal` aborts (the
   * client went away: its place is freed), "full" at once when `maxWaiters` already wait (a call with no time
   * left is a "timeout" first: it needs no place), "closed" on close.
   */
  wait(filter: ArrivalFilter, ms: number, signal?: AbortSignal): Promise<WaitOutcome>;
  /** Ends every wait ("closed") and makes later ones end at once. */
  close(): void;
  waiting(): number;
}

export function createArrivals(opts: { maxWaiters: number }): Arrivals {
  const waiters = new Set<{ filter: ArrivalFilter; settle: (o: WaitOutcome) => void }>();
  let closed = false;
  return {
    publish(arrivals) {
      if (arrivals.length === 0) return;
      for (const w of [...waiters]) if (arrivals.some((a) => matches(w.filter, a))) w.settle("arrived");
    },
    wait(filter, ms, signal) {
      if (closed) return Promise.resolve("closed");
      if (ms <= 0 || signal?.aborted) return Promise.resolve("timeout");
      if (waiters.size >= opts.maxWaiters) return Promise.resolve("full");
      return new Promise<WaitOutcome>((resolve) => {
        const waiter = {
          filter,
          settle: (o: WaitOutcome) => {
            if (!waiters.delete(waiter)) return;
            clearTimeout(timer);
            signal?.removeEventListener("abort", onAbort);
            resolve(o);
          },
        };
        const onAbort = () => waiter.settle("timeout");
        const timer = setTimeout(() => waiter.settle("timeout"), ms);
        signal?.addEventListener("abort", onAbort, { once: true });
        waiters.add(waiter);
      });
    },
    close() {
      closed = true;
      for (const w of [...waiters]) w.settle("closed");
    },
    waiting: () => waiters.size,
  };
}
