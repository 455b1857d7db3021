/**
 * The demo's chat.db schema subset (src/demo/chatdb-schema.ts): exactly the tables gw reads or their
 * triggers touch, every column the field guide names, and, when shared/fixtures holds the real Sequoia
 * dump, every kept column, index and trigger checked against Apple's, definition for definition.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { CHAT_DB_SCHEMA_SQL } from "../../src/demo/chatdb-schema.ts";
import { all, FIXTURE, HAS_FIXTURE } from "../helpers/chatdb-fakes.ts";

describe("the chat.db schema subset", () => {
  const db = new Database(":memory:");
  db.exec(CHAT_DB_SCHEMA_SQL);
  const columns = (table: string, d = db) =>
    d
      .query<{ name: string; type: string; notnull: number; dflt_value: string | null; pk: number }, []>(
        `PRAGMA table_info(${table})`,
      )
      .all();

  test("has exactly the eight tables gw reads or its triggers touch", () => {
    const tables = all(
      db,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    expect(tables.map((t) => t.name).sort()).toEqual([
      "attachment",
      "chat",
      "chat_handle_join",
      "chat_message_join",
      "deleted_messages",
      "handle",
      "message",
      "message_attachment_join",
    ]);
  });

  test("keeps every column the field guide names", () => {
    const want: Record<string, string[]> = {
      message: (
        "ROWID guid text attributedBody handle_id service account date date_read date_delivered is_from_me " +
        "is_sent is_delivered is_read is_finished error item_type group_action_type group_title " +
        "associated_message_guid associated_message_type associated_message_emoji balloon_bundle_id " +
        "thread_originator_guid thread_originator_part reply_to_guid date_edited date_retracted is_empty " +
        "cache_has_attachments cache_roomnames schedule_type schedule_state was_downgraded is_spam " +
        "message_summary_info part_count"
      ).split(" "),
      chat: (
        "ROWID guid style state account_id chat_identifier service_name room_name display_name is_filtered " +
        "last_addressed_handle"
      ).split(" "),
      handle: ["ROWID", "id", "service", "uncanonicalized_id"],
      attachment: (
        "ROWID guid created_date filename uti mime_type transfer_state is_outgoing transfer_name total_bytes " +
        "hide_attachment is_sticker original_guid"
      ).split(" "),
      chat_message_join: ["chat_id", "message_id", "message_date"],
    };
    for (const [table, names] of Object.entries(want)) {
      const have = new Set(columns(table).map((c) => c.name));
      expect(names.filter((n) => !have.has(n))).toEqual([]);
    }
  });

  test.if(HAS_FIXTURE)("every kept column, index and trigger is Apple's, definition for definition", () => {
    const real = new Database(":memory:");
    real.exec(readFileSync(FIXTURE, "utf8"));
    const tables = all(
      db,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    );
    for (const { name } of tables) {
      const theirs = new Map(columns(String(name), real).map((c) => [c.name, c]));
      for (const col of columns(String(name))) {
        expect({ table: name, ...col, cid: 0 }).toEqual({
          table: name,
          ...theirs.get(col.name),
          cid: 0,
        } as never);
      }
    }
    const shape = (d: Database, type: string) =>
      all(d, "SELECT name, tbl_name FROM sqlite_master WHERE type = ?1 AND sql IS NOT NULL", type);
    const realIndexes = shape(real, "index").map((r) => r.name);
    for (const { name } of shape(db, "index")) {
      expect(realIndexes).toContain(name);
      const cols = (d: Database) => all(d, `PRAGMA index_info(${name})`).map((r) => r.name);
      expect(cols(db)).toEqual(cols(real));
    }
    const realTriggers = shape(real, "trigger").map((r) => `${r.name}@${r.tbl_name}`);
    for (const t of shape(db, "trigger")) expect(realTriggers).toContain(`${t.name}@${t.tbl_name}`);
    real.close();
  });

  test("indexes date, (handle_id, date), the join's (chat_id, message_date, message_id) but not date_edited", () => {
    const indexed = all(db, "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'message'")
      .flatMap((i) => all(db, `PRAGMA index_info(${i.name})`).map((c) => c.name))
      .join(",");
    expect(indexed).toContain("date");
    expect(indexed).not.toContain("date_edited");
    expect(all(db, "PRAGMA index_info(message_idx_handle)").map((c) => c.name)).toEqual([
      "handle_id",
      "date",
    ]);
    const join = all(db, "PRAGMA index_info(chat_message_join_idx_message_date_id_chat_id)").map(
      (c) => c.name,
    );
    expect(join).toEqual(["chat_id", "message_date", "message_id"]);
  });
});
