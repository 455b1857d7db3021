/**
 * Idempotency keys: (scope, key) -> body hash and, once complete, the exact response (status and body
 * text) to replay. A key is `in_flight` while its first request runs. Rows past `expires_at` count as
 * absent and are purged. A key completes in the same transaction as the effect it records (`settle`).
 */
import type { Database } from "bun:sqlite";

export type IdempotencyRow = {
  scope: string;
  key: string;
  body_hash: string;
  state: "in_flight" | "complete";
  status_code: number | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
};

export function createIdempotencyStore(db: Database) {
  const get = db.prepare<IdempotencyRow, [string, string, number]>(
    "SELECT * FROM idempotency_keys WHERE scope = ?1 AND key = ?2 AND expires_at > ?3",
  );
  const begin = db.prepare<unknown, [string, string, string, number, number]>(
    `INSERT INTO idempotency_keys (scope, key, body_hash, state, created_at, expires_at)
     VALUES (?1, ?2, ?3, 'in_flight', ?4, ?5)
     ON CONFLICT (scope, key) DO UPDATE SET body_hash = excluded.body_hash, state = 'in_flight',
       status_code = NULL, response_body = NULL, created_at = excluded.created_at, expires_at = excluded.expires_at`,
  );
  const complete = db.prepare<unknown, [string, string, number, string]>(
    "UPDATE idempotency_keys SET state = 'complete', status_code = ?3, response_body = ?4 WHERE scope = ?1 AND key = ?2",
  );
  const remove = db.prepare<unknown, [string, string]>(
    "DELETE FROM idempotency_keys WHERE scope = ?1 AND key = ?2",
  );
  const purge = db.prepare<unknown, [number]>("DELETE FROM idempotency_keys WHERE expires_at <= ?1");

  return {
    get: (scope: string, key: string, now: number): IdempotencyRow | null => get.get(scope, key, now),
    begin: (scope: string, key: string, bodyHash: string, now: number, expiresAt: number): void =>
      void begin.run(scope, key, bodyHash, now, expiresAt),
    /**
     * Runs `produce` (store writes of the request's effect) and stores its response under the key, in one
     * transaction; with no key, just `produce` in a transaction.
     */
    settle: (
      scope: string,
      key: string | null,
      produce: () => { status: number; body: string },
    ): { status: number; body: string } =>
      db
        .transaction(() => {
          const res = produce();
          if (key !== null) complete.run(scope, key, res.status, res.body);
          return res;
        })
        .immediate(),
    abandon: (scope: string, key: string): void => void remove.run(scope, key),
    purgeExpired: (now: number): number => purge.run(now).changes,
  };
}

export type IdempotencyStore = ReturnType<typeof createIdempotencyStore>;
