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

export function createReactor(deps: { api: ApiClient; log: Logger; onGone: (key: string) => void }) {
  const entries = new Map<string, Entry>();
  const calls = new Set<Promise<void>>();
  const cut = new AbortController();
  let stopped = false;

  const settle = (e: Entry, adding: boolean, res: ApiResponse) => {
    const verdict = reactVerdict(res.status);
    if (verdict === "ok") {
      e.placed = adding ? "yes" : "no";
      e.failures = 0;
      return;
    }
    if (verdict === "gone") {
      e.refused = true;
      e.placed = "no";
      deps.log.warn(
        { delivery_id: e.key, message_id: e.messageId, status: res.status, body: res.body },
        "acknowledgement reaction refused by gw serve; none stands",
      );
      return;
    }
    if (adding) e.placed = "maybe";
    if (stopped) return;
    e.failures += 1;
    const ms = reactRetryMs(e.failures, res.status === 429 ? (retryAfterS(res) ?? undefined) : undefined);
    deps.log.warn(
      { delivery_id: e.key, message_id: e.messageId, status: res.status, retry_in_ms: ms },
      `acknowledgement reaction not ${adding ? "added" : "removed"}; trying again later`,
    );
    e.retry = setTimeout(() => {
      e.retry = null;
      drive(e);
    }, ms);
  };

  const drive = (e: Entry): void => {
    if (e.busy || e.retry) return;
    if (!e.want && (e.placed === "no" || e.refused)) {
      entries.delete(e.key);
      deps.onGone(e.key);
      return;
    }
    if (stopped) return;
    if (e.want && (e.placed === "yes" || e.refused)) return;
    const adding = e.want;
    e.busy = true;
    const call = deps.api
      .call("POST", "/messages/react", {
        body: { message_id: e.messageId, emoji: e.emoji, ...(adding ? {} : { remove: true }) },
        signal: cut.signal,
      })
      .then((res) => {
        e.busy = false;
        settle(e, adding, res);
        drive(e);
      });
    calls.add(call);
    void call.finally(() => calls.delete(call));
  };

  return {
    /** Puts (or keeps) the reaction on the message while the job `key` waits or runs. */
    hold(key: string, messageId: string, emoji: string): void {
      const e: Entry = entries.get(key) ?? {
        key,
        messageId,
        emoji,
        want: true,
        placed: "no",
        refused: false,
        busy: false,
        retry: null,
        failures: 0,
      };
      e.want = true;
      entries.set(key, e);
      drive(e);
    },
    /** Takes the job's reaction back (its run ended); one that may stand from before (`emoji`) too. */
    release(key: string, standing?: { messageId: string; emoji: string }): void {
      let e = entries.get(key);
      if (!e && standing) {
        e = {
          key,
          ...standing,
          want: false,
          placed: "maybe",
          refused: false,
          busy: false,
          retry: null,
          failures: 0,
        };
        entries.set(key, e);
      }
      if (!e) return;
      e.want = false;
      drive(e);
    },
    /** Reactions not yet where they should be (tests, logs). */
    pending: (): number => entries.size,
    /**
     * Ends retries and waits briefly for the calls under way (a removal that succeeds meanwhile is still
     * forgotten); the journal keeps what is left for the next start. Call before closing the journal.
     */
    async stop(): Promise<void> {
      stopped = true;
      for (const e of entries.values()) if (e.retry) clearTimeout(e.retry);
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        Promise.all(calls),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, REACT_STOP_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
      cut.abort();
      await Promise.all(calls);
    },
  };
}

export type Reactor = ReturnType<typeof createReactor>;
