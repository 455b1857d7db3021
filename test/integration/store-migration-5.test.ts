/**
 * Migration 5 (the channel list) on a database a previous gw wrote: every channel with a visible message is
 * counted from the rows already there (newest visible message, allowed count, each agent's reads), and from
 * then the store's writes keep the counts in step.
 */
import { expect, test } from "bun:test";
import { databaseAtVersion, openUpgraded } from "../helpers/old-database.ts";

function databaseOfVersion4(path: string): void {
  const db = databaseAtVersion(path, 4);
  const msg = db.prepare(
    `INSERT INTO messages (id, source, platform_id, channel_id, channel_type, sender_id, sender_name, person_id,
       text, reply_to, message_ts, direction, allowlist_status, raw, created_at)
     VALUES (?1, 'device_messenger', ?1, ?2, ?3, 'x', 'X', NULL, 'text', NULL, ?4, ?5, ?6, '{}', ?4)`,
  );
  msg.run("msg_1", "dm-1", "dm", 1, "inbound", "allowed");
  msg.run("msg_2", "dm-1", "dm", 4, "outbound", "outbound");
  msg.run("msg_3", "dm-1", "dm", 3, "inbound", "allowed");
  msg.run("msg_4", "dm-1", "dm", 9, "inbound", "deleted");
  msg.run("msg_5", "group-1", "group", 8, "inbound", "unknown");
  msg.run("msg_6", "group-2", "group", 2, "inbound", "allowed");
  db.run(
    "INSERT INTO read_marks VALUES ('msg_1', 'agent-a', 5), ('msg_6', 'agent-a', 5), ('msg_3', 'agent-b', 5)",
  );
  db.close();
}

test("a version 4 database gets its channel list counted from the rows it holds", () => {
  const store = openUpgraded(databaseOfVersion4);
  try {
    const page = (agentId: string) =>
      store.channelList
        .page({ agentId, source: null, limit: 10 })
        .map((r) => [r.channel_id, r.channel_type, r.last_visible_at, r.unread_count]);
    expect(page("agent-a")).toEqual([
      ["dm-1", "dm", 4, 1],
      ["group-2", "group", 2, 0],
    ]);
    expect(page("agent-b")).toEqual([
      ["dm-1", "dm", 4, 1],
      ["group-2", "group", 2, 1],
    ]);
    store.messages.markDeleted("msg_2");
    store.messages.markDeleted("msg_3");
    expect(page("agent-b")).toEqual([
      ["group-2", "group", 2, 1],
      ["dm-1", "dm", 1, 1],
    ]);
    expect(store.db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  } finally {
    store.close();
  }
});
