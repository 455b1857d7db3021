/**
 * Webhook delivery rows (the outbox). A row is created `pending` in the ingest transaction of an
 * allowed inbound message when a webhook URL is configured: exactly one per message, with a delivery
 * id that stays the same on every attempt. The dispatcher (webhooks/) moves rows on from there.
 */
import type { Database } from "bun:sqlite";

export type DeliveryStatus = "pending" | "delivered" | "dead";

export type DeliveryRow = {
  id: string;
  message_id: string;
  channel_id: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: number | null;
  last_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
};

export function createDeliveryStore(db: Database) {
  const insert = db.prepare<unknown, [string, string, string, number]>(
    `INSERT INTO webhook_deliveries (id, message_id, channel_id, status, attempt_count, next_attempt_at, created_at, updated_at)
     VALUES (?1, ?2, ?3, 'pending', 0, ?4, ?4, ?4)`,
  );
  const counts = db.prepare<{ status: DeliveryStatus; n: number }, []>(
    "SELECT status, COUNT(*) AS n FROM webhook_deliveries INDEXED BY webhook_deliveries_due WHERE status IN ('pending', 'dead') GROUP BY status",
  );
  const byMessage = db.prepare<DeliveryRow, [string]>(
    "SELECT * FROM webhook_deliveries WHERE message_id = ?1",
  );

  return {
    insertPending: (id: string, messageId: string, channelId: string, now: number): void =>
      void insert.run(id, messageId, channelId, now),
    forMessage: (messageId: string): DeliveryRow | null => byMessage.get(messageId),
    /** Queue depth (pending) and dead-letter count for /healthz. */
    counts(): { pending: number; dead: number } {
      const out = { pending: 0, dead: 0 };
      for (const r of counts.all()) out[r.status as "pending" | "dead"] = r.n;
      return out;
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
