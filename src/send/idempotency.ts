/**
 * Idempotency-Key handling for sends (spec E.6, decisions.md). The first request with a key runs and,
 * when it completes with a 2xx or a platform 502, its exact status and body bytes are stored; a replay
 * with the same body hash gets those bytes back, a different body gets 422 IDEMPOTENCY_KEY_REUSE, and a
 * duplicate arriving while the first still runs waits for it and gets the same outcome. Other errors
 * (validation, unknown channel, rate limit) are not remembered, so the client may retry with the key.
 * A key left `in_flight` by a crash is never re-run: its outcome is unknown, and sending again could
 * send twice, so it answers 502 PLATFORM_SEND_FAILED (and remembers that).
 */
import { createHash } from "node:crypto";
import { AppError } from "../core/errors.ts";
import type { Clock } from "../core/ports.ts";
import type { IdempotencyStore } from "../store/idempotency.ts";

/** A response as replayed: status and the exact body text. */
export interface StoredResponse {
  status: number;
  body: string;
}

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
  run(key: string | null, body: unknown, work: () => Promise<StoredResponse>): Promise<StoredResponse>;
  purgeExpired(): number;
}

export function createIdempotentRunner(deps: {
  store: IdempotencyStore;
  clock: Clock;
  ttlMs: number;
  scope: string;
}): IdempotentRunner {
  const { store, clock, scope } = deps;
  const running = new Map<string, { hash: string; outcome: Promise<StoredResponse> }>();

  const reuse = (key: string) =>
    new AppError("IDEMPOTENCY_KEY_REUSE", "This Idempotency-Key was used with a different request body.", {
      field: "Idempotency-Key",
      key,
    });

  const settle = async (key: string, work: () => Promise<StoredResponse>): Promise<StoredResponse> => {
    try {
      const res = await work();
      store.complete(scope, key, res.status, res.body);
      return res;
    } catch (err) {
      if (err instanceof AppError && CACHED_ERRORS.has(err.code)) {
        const res = { status: err.status, body: JSON.stringify(err.toEnvelope()) };
        store.complete(scope, key, res.status, res.body);
        return res;
      }
      store.abandon(scope, key);
      throw err;
    }
  };

  return {
    async run(key, body, work) {
      if (key === null) return work();
      const hash = bodyHash(body);
      const current = running.get(key);
      if (current) {
        if (current.hash !== hash) throw reuse(key);
        return current.outcome;
      }
      const now = clock.now();
      const row = store.get(scope, key, now);
      if (row) {
        if (row.body_hash !== hash) throw reuse(key);
        if (row.state === "complete")
          return { status: row.status_code ?? 200, body: row.response_body ?? "" };
        const unknown = new AppError(
          "PLATFORM_SEND_FAILED",
          "An earlier request with this Idempotency-Key was interrupted; whether it was sent is unknown, so it is not sent again.",
          { reason: "outcome_unknown", key },
        );
        return settle(key, () => Promise.reject(unknown));
      }
      store.begin(scope, key, hash, now, now + deps.ttlMs);
      const outcome = settle(key, work);
      running.set(key, { hash, outcome });
      try {
        return await outcome;
      } finally {
        running.delete(key);
      }
    },
    purgeExpired: () => store.purgeExpired(clock.now()),
  };
}
