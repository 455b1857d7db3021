/**
 * Webhook delivery rows (the outbox). A row is created `pending` in the ingest transaction of an
 * allowed inbound message (or of a visible event, when GW_WEBHOOK_EVENTS asks for its kind): exactly one
 * per message or event, with a delivery id that stays the same on every attempt. The dispatcher (webhooks/) moves rows on from there; an
 * operator can re-queue rows (`gw webhooks redeliver`).
 */
import type { Database } from "bun:sqlite";

export type DeliveryStatus = "pending" | "delivered" | "dead";

export type DeliveryRow = {
  id: string;
  message_id: string;
  /** Set on an event delivery (extensions.md §1): the event posted instead of the message. */
  event_id: string | null;
  channel_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: number | null;
  last_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
};

/**
 * A delivery whose content was purged: its message was deleted (a tombstone) and it is not the
 * `message.deleted` event's own delivery. Such a delivery is never sent again.
 */
const PURGED_SQL = `EXISTS (SELECT 1 FROM messages m WHERE m.id = webhook_deliveries.message_id
    AND m.allowlist_status = 'deleted')
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = webhook_deliveries.event_id AND e.kind = 'message.deleted')`;

/** The outcome of one attempt, as recordAttempt stores it. */
export interface AttemptRecord {
  status: DeliveryStatus;
  attempts: number;
  nextAt: number | null;
  code: number | null;
  error: string | null;
}

export function createDeliveryStore(db: Database) {
  const insert = db.prepare<unknown, [string, string, string, number]>(
    `INSERT INTO webhook_deliveries (id, message_id, channel_id, status, attempt_count, next_attempt_at, created_at, updated_at)
     VALUES (?1, ?2, ?3, 'pending', 0, ?4, ?4, ?4)`,
  );
  const insertEvent = db.prepare<unknown, [string, string, string, string, number]>(
    `INSERT INTO webhook_deliveries (id, message_id, event_id, channel_id, status, attempt_count, next_attempt_at, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, 'pending', 0, ?5, ?5, ?5)`,
  );
  const dropUndelivered = db.prepare<unknown, [string]>(
    "DELETE FROM webhook_deliveries WHERE message_id = ?1 AND status IN ('pending', 'dead')",
  );
  const counts = db.prepare<{ status: DeliveryStatus; n: number }, []>(
    "SELECT status, COUNT(*) AS n FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status IN ('pending', 'dead') GROUP BY status",
  );
  const byMessage = db.prepare<DeliveryRow, [string]>(
    "SELECT * FROM webhook_deliveries WHERE message_id = ?1 AND event_id IS NULL",
  );
  const byId = db.prepare<DeliveryRow, [string]>("SELECT * FROM webhook_deliveries WHERE id = ?1");
  const due = db.prepare<DeliveryRow, [number, number]>(
    `SELECT * FROM webhook_deliveries INDEXED BY webhook_deliveries_due
     WHERE status = 'pending' AND next_attempt_at <= ?1 ORDER BY next_attempt_at, created_at, message_id LIMIT ?2`,
  );
  const nextDue = db.prepare<{ at: number | null }, []>(
    "SELECT MIN(next_attempt_at) AS at FROM webhook_deliveries WHERE status = 'pending'",
  );
  const record = db.prepare<
    unknown,
    [string, string, number, number | null, number | null, string | null, number]
  >(
    `UPDATE webhook_deliveries SET status = ?2, attempt_count = ?3, next_attempt_at = ?4, last_code = ?5,
       last_error = ?6, updated_at = ?7 WHERE id = ?1`,
  );
  const list = db.prepare<DeliveryRow, [string | null, number]>(
    "SELECT * FROM webhook_deliveries WHERE ?1 IS NULL OR status = ?1 ORDER BY created_at DESC LIMIT ?2",
  );
  const requeue = db.prepare<unknown, [string, number]>(
    `UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = ?2, updated_at = ?2
     WHERE id = ?1`,
  );
  const requeueDead = db.prepare<unknown, [number]>(
    `UPDATE webhook_deliveries SET status = 'pending', attempt_count = 0, next_attempt_at = ?1, updated_at = ?1
     WHERE status = 'dead' AND NOT (${PURGED_SQL})`,
  );
  const purged = db.prepare<{ purged: number }, [string]>(
    `SELECT (${PURGED_SQL}) AS purged FROM webhook_deliveries WHERE id = ?1`,
  );

  return {
    insertPending: (id: string, messageId: string, channelId: string, now: number): void =>
      void insert.run(id, messageId, channelId, now),
    insertEventPending: (
      id: string,
      messageId: string,
      eventId: string,
      channelId: string,
      now: number,
    ): void => void insertEvent.run(id, messageId, eventId, channelId, now),
    /**
     * A deleted message's deliveries that have not gone out, of the message and of its events, pending or
     * dead: none is pushed or re-driven any more (extensions.md §4, a tombstone purges everything).
     */
    dropUndelivered: (messageId: string): void => void dropUndelivered.run(messageId),
    forMessage: (messageId: string): DeliveryRow | null => byMessage.get(messageId),
    get: (id: string): DeliveryRow | null => byId.get(id),
    /** Pending rows whose next attempt is due, oldest due first. */
    due: (now: number, limit: number): DeliveryRow[] => due.all(now, limit),
    /** When the earliest pending row is due, or null when nothing is pending. */
    nextDueAt: (): number | null => nextDue.get()?.at ?? null,
    recordAttempt(id: string, r: AttemptRecord, now: number): void {
      record.run(id, r.status, r.attempts, r.nextAt, r.code, r.error, now);
    },
    list: (status: DeliveryStatus | null, limit: number): DeliveryRow[] => list.all(status, limit),
    /** Manual re-drive: pending again with a fresh attempt count and the same delivery id. */
    requeue: (id: string, now: number): boolean => requeue.run(id, now).changes === 1,
    /** Every dead delivery re-driven, but those whose content was purged (their message deleted). */
    requeueAllDead: (now: number): number => requeueDead.run(now).changes,
    /** Whether this delivery's message was deleted since (its content purged): it is never sent again. */
    isPurged: (id: string): boolean => purged.get(id)?.purged === 1,
    /** Queue depth (pending) and dead-letter count for /healthz. */
    counts(): { pending: number; dead: number } {
      const out = { pending: 0, dead: 0 };
      for (const r of counts.all()) out[r.status as "pending" | "dead"] = r.n;
      return out;
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
