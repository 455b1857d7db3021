/**
 * Migration 4 (events) rebuilds `messages` and `webhook_deliveries` on a database a previous gw wrote:
 * every row, read mark, attachment and delivery is kept, references stay intact, and the new states
 * (a deleted tombstone, event deliveries) are accepted afterwards.
 */
import { expect, test } from "bun:test";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { databaseAtVersion, openUpgraded } from "../helpers/old-database.ts";

function databaseOfVersion3(path: string): void {
  const db = databaseAtVersion(path, 3);
  const msg = db.prepare(
    `INSERT INTO messages (id, source, platform_id, channel_id, channel_type, sender_id, sender_name, person_id,
       text, reply_to, message_ts, direction, allowlist_status, raw, created_at)
     VALUES (?1, 'device_messenger', ?2, '+15555550100', 'dm', ?3, 'Ann', NULL, ?4, ?5, ?6, ?7, ?8, '{}', ?6)`,
  );
  msg.run("msg_1", "g1", "+15555550100", "hello", null, 1, "inbound", "allowed");
  msg.run("msg_2", "g2", "me", "reply", "msg_1", 2, "outbound", "outbound");
  msg.run("msg_3", "g3", "+15555550199", "stranger", null, 3, "inbound", "unknown");
  db.run("INSERT INTO read_marks VALUES ('msg_1', 'agent', 5)");
  db.run("INSERT INTO attachments VALUES ('att_1', 'msg_1', 'image/png', 3, 'att_1', NULL, 1)");
  db.run(
    "INSERT INTO webhook_deliveries (id, message_id, channel_id, status, attempt_count, created_at, updated_at) VALUES ('d1', 'msg_1', '+15555550100', 'delivered', 1, 1, 2)",
  );
  db.close();
}

test("a version 3 database keeps every row and reference through the rebuild", () => {
  const store = openUpgraded(databaseOfVersion3);
  try {
    const q = (sql: string) => store.db.query(sql).all();
    expect(q("PRAGMA user_version")).toEqual([{ user_version: MIGRATIONS.length }]);
    expect(q("SELECT id, text, reply_to, allowlist_status FROM messages ORDER BY id")).toEqual([
      { id: "msg_1", text: "hello", reply_to: null, allowlist_status: "allowed" },
      { id: "msg_2", text: "reply", reply_to: "msg_1", allowlist_status: "outbound" },
      { id: "msg_3", text: "stranger", reply_to: null, allowlist_status: "unknown" },
    ]);
    expect(q("SELECT message_id, agent_id FROM read_marks")).toEqual([
      { message_id: "msg_1", agent_id: "agent" },
    ]);
    expect(q("SELECT id, message_id, event_id, status FROM webhook_deliveries")).toEqual([
      { id: "d1", message_id: "msg_1", event_id: null, status: "delivered" },
    ]);
    expect(q("PRAGMA foreign_key_check")).toEqual([]);
    expect(q("PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    expect(q("PRAGMA foreign_keys")).toEqual([{ foreign_keys: 1 }]);
    expect(store.messages.get("msg_2")?.reply_to).toBe("msg_1");
    // The relaxed checks: an outbound message can become a tombstone; a second message delivery is refused.
    store.db.run("UPDATE messages SET allowlist_status = 'deleted', text = '' WHERE id = 'msg_2'");
    expect(() =>
      store.db.run(
        "INSERT INTO webhook_deliveries (id, message_id, channel_id, status, created_at, updated_at) VALUES ('d2', 'msg_1', 'c', 'pending', 1, 1)",
      ),
    ).toThrow(/UNIQUE/);
  } finally {
    store.close();
  }
});
