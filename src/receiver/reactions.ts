/**
 * The acknowledgement reactions (GW_RECEIVER_ACK_EMOJI, extensions §7), a runner over POST /messages/react.
 * Each job's reaction has a wanted state (`hold` while its run waits or runs, `release` once it ended) and
 * the reactor drives the message towards it, one call at a time per job, so an add and its removal never
 * cross. A call that fails is logged and tried again after reactRetryMs (pure, below); it never blocks a
 * run. Once a removal succeeds, or the service says no reaction can stand there (the message is gone, the
 * platform cannot react, the emoji is refused), `onGone` lets the journal forget it. Discord messages only:
 * callers never hand it an iMessage one.
 */
import type { Logger } from "../core/ports.ts";
import type { ApiClient, ApiResponse } from "../mcp/api-client.ts";
import { retryAfterS } from "../mcp/backoff.ts";

/** The pauses before the 2nd, 3rd, … try of one react call; the last repeats. */
export const REACT_RETRY_MS = [1_000, 2_000, 5_000, 15_000, 30_000, 60_000] as const;
/** The longest pause, also for a 429's Retry-After. */
export const REACT_RETRY_MAX_MS = 60_000;
/** How long `stop` waits for the calls under way before it cuts them off. */
export const REACT_STOP_WAIT_MS = 1_000;

/** What a react answer means: done, nothing can stand there (never try again), or try again later. */
export function reactVerdict(status: number): "ok" | "gone" | "retry" {
  if (status >= 200 && status < 300) return "ok";
  // 404 MESSAGE_NOT_FOUND, 422 PLATFORM_UNSUPPORTED, 400 VALIDATION_FAILED: no reaction of gw stands.
  if (status === 404 || status === 422 || status === 400) return "gone";
  return "retry";
}

/** The pause before the next try after `failures` failed ones (1 = the first failed), or a 429's wait. */
export function reactRetryMs(failures: number, retryAfterS?: number): number {
  if (retryAfterS !== undefined && Number.isFinite(retryAfterS) && retryAfterS >= 0)
    return Math.min(REACT_RETRY_MAX_MS, Math.max(100, Math.ceil(retryAfterS * 1000)));
  const i = Math.min(Math.max(failures, 1), REACT_RETRY_MS.length) - 1;
  return REACT_RETRY_MS[i] as number;
}

interface Entry {
  key: string;
  messageId: string;
  emoji: string;
  want: boolean;
  /** Whether the reaction may be on the message: an add was tried (its outcome may be unknown). */
  placed: "no" | "maybe" | "yes";
  /** The service refused it for good: nothing to add or remove. */
  refused: boolean;
  busy: boolean;
  retry: ReturnType<typeof setTimeout> | null;
  failures: number;
}

interface ReactorDeps {
  api: ApiClient;
  log: Logger;
  onGone: (key: string) => void;
}

/** One reactor's state: its entries, the calls under way, and whether it is stopping. */
interface Desk {
  deps: ReactorDeps;
  entries: Map<string, Entry>;
  calls: Set<Promise<void>>;
  cut: AbortController;
  stopped: boolean;
}

const entry = (key: string, messageId: string, emoji: string, placed: Entry["placed"]): Entry => ({
  key,
  messageId,
  emoji,
  want: true,
  placed,
  refused: false,
  busy: false,
  retry: null,
  failures: 0,
});

/** Records what a call's answer means for the entry; a failure arms its next try. */
function settle(desk: Desk, e: Entry, adding: boolean, res: ApiResponse): void {
  const { log } = desk.deps;
  const verdict = reactVerdict(res.status);
  if (verdict === "ok") {
    e.placed = adding ? "yes" : "no";
    e.failures = 0;
    return;
  }
  if (verdict === "gone") {
    e.refused = true;
    e.placed = "no";
    log.warn(
      { delivery_id: e.key, message_id: e.messageId, status: res.status, body: res.body },
      "acknowledgement reaction refused by gw serve; none stands",
    );
    return;
  }
  if (adding) e.placed = "maybe";
  if (desk.stopped) return;
  e.failures += 1;
  const ms = reactRetryMs(e.failures, res.status === 429 ? (retryAfterS(res) ?? undefined) : undefined);
  log.warn(
    { delivery_id: e.key, message_id: e.messageId, status: res.status, retry_in_ms: ms },
    `acknowledgement reaction not ${adding ? "added" : "removed"}; trying again later`,
  );
  e.retry = setTimeout(() => {
    e.retry = null;
    drive(desk, e);
  }, ms);
}

/** Makes the one call that moves the entry towards what is wanted, unless one is under way or waits. */
function drive(desk: Desk, e: Entry): void {
  if (e.busy || e.retry) return;
  if (!e.want && (e.placed === "no" || e.refused)) {
    desk.entries.delete(e.key);
    desk.deps.onGone(e.key);
    return;
  }
  if (desk.stopped || (e.want && (e.placed === "yes" || e.refused))) return;
  const adding = e.want;
  e.busy = true;
  const call = desk.deps.api
    .call("POST", "/messages/react", {
      body: { message_id: e.messageId, emoji: e.emoji, ...(adding ? {} : { remove: true }) },
      signal: desk.cut.signal,
    })
    .then((res) => {
      e.busy = false;
      settle(desk, e, adding, res);
      drive(desk, e);
    });
  desk.calls.add(call);
  void call.finally(() => desk.calls.delete(call));
}

export function createReactor(deps: ReactorDeps) {
  const desk: Desk = {
    deps,
    entries: new Map(),
    calls: new Set(),
    cut: new AbortController(),
    stopped: false,
  };
  return {
    /** Puts (or keeps) the reaction on the message while the job `key` waits or runs. */
    hold(key: string, messageId: string, emoji: string): void {
      const e = desk.entries.get(key) ?? entry(key, messageId, emoji, "no");
      e.want = true;
      desk.entries.set(key, e);
      drive(desk, e);
    },
    /** Takes the job's reaction back (its run ended); one that may stand from before (`standing`) too. */
    release(key: string, standing?: { messageId: string; emoji: string }): void {
      let e = desk.entries.get(key);
      if (!e && standing) {
        e = entry(key, standing.messageId, standing.emoji, "maybe");
        desk.entries.set(key, e);
      }
      if (!e) return;
      e.want = false;
      drive(desk, e);
    },
    /** Reactions not yet where they should be (tests, logs). */
    pending: (): number => desk.entries.size,
    /**
     * Ends retries and waits briefly for the calls under way (a removal that succeeds meanwhile is still
     * forgotten); the journal keeps what is left for the next start. Call before closing the journal.
     */
    async stop(): Promise<void> {
      desk.stopped = true;
      for (const e of desk.entries.values()) if (e.retry) clearTimeout(e.retry);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(desk.calls),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, REACT_STOP_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      desk.cut.abort();
      await Promise.all(desk.calls);
    },
  };
}

export type Reactor = ReturnType<typeof createReactor>;
