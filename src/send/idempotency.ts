/**
 * Idempotency-Key handling for sends (spec E.6, decisions.md). A send runs in two steps: the platform call
 * (async), then a synchronous commit that records its result in one transaction with the key's stored
 * response. A replay with the same body hash gets the stored bytes, a different body 422
 * IDEMPOTENCY_KEY_REUSE; a duplicate arriving while the first runs waits for it. Once the platform accepted a
 * send, its key is never released, so a replay never sends it again.
 */
import { createHash } from "node:crypto";
import { AppError } from "../core/errors.ts";
import type { Clock, Logger } from "../core/ports.ts";
import type { IdempotencyStore } from "../store/idempotency.ts";

/** A response as replayed: status and the exact body text. */
export interface StoredResponse {
  status: number;
  body: string;
}

/** Records what the platform accepted (store writes only, no I/O) and returns the response to give. */
export type Commit = () => StoredResponse;

/** After a commit failed, it is tried again this often until it lands or the runner closes. */
export const COMMIT_RETRY_MS = 1000;

/**
 * Platform failures with a 2xx-like certainty, remembered with the key; other errors (validation, unknown
 * channel, rate limit) release the key for a retry.
 */
const CACHED_ERRORS = new Set(["PLATFORM_AUTH", "PLATFORM_SEND_FAILED"]);

export function bodyHash(body: unknown): string {
  return createHash("sha256").update(canonicalJson(body)).digest("hex");
}

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export interface IdempotentRunner {
  run(key: string | null, body: unknown, work: () => Promise<Commit>): Promise<StoredResponse>;
  purgeExpired(): number;
  /** Tries every commit still waiting once more, then stops retrying (call before the store closes). */
  close(): void;
}

const responseOf = (err: AppError): StoredResponse => ({
  status: err.status,
  body: JSON.stringify(err.toEnvelope()),
});

/** The answer while a send the platform accepted is not recorded yet (or was cut off by a crash). */
const unknownOutcome = (key: string | null, message: string, details: Record<string, unknown> = {}) =>
  new AppError("PLATFORM_SEND_FAILED", message, {
    outcome: "unknown",
    ...(key === null ? {} : { key }),
    ...details,
  });

export function createIdempotentRunner(deps: {
  store: IdempotencyStore;
  clock: Clock;
  ttlMs: number;
  scope: string;
  log: Logger;
}): IdempotentRunner {
  const { store, clock, scope, log } = deps;
  const running = new Map<string, { hash: string; outcome: Promise<StoredResponse> }>();
  /** Sends the platform accepted whose commit has not landed yet, oldest first. */
  const uncommitted: { key: string | null; hash: string; commit: Commit }[] = [];
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let closed = false;

  const reuse = (key: string) =>
    new AppError("IDEMPOTENCY_KEY_REUSE", "This Idempotency-Key was used with a different request body.", {
      field: "Idempotency-Key",
      key,
    });

  /** Commits the waiting sends in order; stops at the first that still fails. */
  const retryCommits = (): void => {
    retryTimer = null;
    while (uncommitted.length > 0) {
      const next = uncommitted[0] as (typeof uncommitted)[number];
      try {
        store.settle(scope, next.key, next.commit);
      } catch (err) {
        if (!closed) retryTimer = setTimeout(retryCommits, COMMIT_RETRY_MS);
        else
          log.error({ err: String(err), key: next.key }, "a sent message could not be recorded before stop");
        return;
      }
      uncommitted.shift();
      log.info({ key: next.key }, "a sent message was recorded after the store failed earlier");
    }
  };

  /**
   * Runs the commit with the key's completion. If the store fails (database busy, disk full), it is kept for
   * a retry; until it lands, the request and every replay answer 502 PLATFORM_SEND_FAILED
   * `outcome: "unknown"`, then replays get its 200.
   */
  const commit = (key: string | null, hash: string, work: Commit): StoredResponse => {
    try {
      return store.settle(scope, key, work);
    } catch (err) {
      log.error(
        { err: String(err), key, retry_ms: COMMIT_RETRY_MS },
        "the platform accepted a send but the store could not record it; retrying (never sent again)",
      );
      uncommitted.push({ key, hash, commit: work });
      if (!retryTimer && !closed) retryTimer = setTimeout(retryCommits, COMMIT_RETRY_MS);
      return responseOf(
        unknownOutcome(
          key,
          "The platform took the message, but gw could not record it yet; it is not sent again. Retry with the same Idempotency-Key to get its id.",
        ),
      );
    }
  };

  const settle = async (key: string | null, hash: string, work: () => Promise<Commit>) => {
    let done: Commit;
    try {
      done = await work();
    } catch (err) {
      if (err instanceof AppError && CACHED_ERRORS.has(err.code)) {
        return key === null ? responseOf(err) : store.settle(scope, key, () => responseOf(err));
      }
      if (key !== null) store.abandon(scope, key);
      throw err;
    }
    return commit(key, hash, done);
  };

  return {
    async run(key, body, work) {
      if (key === null) return settle(null, "", work);
      const hash = bodyHash(body);
      const current = running.get(key);
      if (current) {
        if (current.hash !== hash) throw reuse(key);
        return current.outcome;
      }
      const waiting = uncommitted.find((u) => u.key === key);
      if (waiting) {
        if (waiting.hash !== hash) throw reuse(key);
        return responseOf(
          unknownOutcome(
            key,
            "The platform took the message, but gw could not record it yet; it is not sent again. Retry later with the same Idempotency-Key to get its id.",
          ),
        );
      }
      const now = clock.now();
      const row = store.get(scope, key, now);
      if (row) {
        if (row.body_hash !== hash) throw reuse(key);
        if (row.state === "complete")
          return { status: row.status_code ?? 200, body: row.response_body ?? "" };
        /** A key left `in_flight` by a crash is never run again: it answers (and remembers) the same 502. */
        const interrupted = unknownOutcome(
          key,
          "An earlier request with this Idempotency-Key was interrupted; whether it was sent is unknown, so it is not sent again.",
          { reason: "outcome_unknown" },
        );
        return settle(key, hash, () => Promise.reject(interrupted));
      }
      store.begin(scope, key, hash, now, now + deps.ttlMs);
      const outcome = settle(key, hash, work);
      running.set(key, { hash, outcome });
      try {
        return await outcome;
      } finally {
        running.delete(key);
      }
    },
    purgeExpired: () => store.purgeExpired(clock.now()),
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryCommits();
    },
  };
}
