/**
 * The chat.db the `chat-db-rows` item writes: Apple's Sequoia schema (the demo writer's subset when the
 * shared fixture is absent) with a friend's, a stranger's and a group chat. `writeBadRow` writes one bad
 * row with its handle, chat joins and attachments in one transaction, and throws what SQLite refuses.
 */
import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CHAT_DB_SCHEMA_SQL } from "../../../../src/demo/chatdb-schema.ts";
import { appleNanos } from "../../../../src/demo/chatdb-writer.ts";
import { DM, STRANGER } from "../harness.ts";
import {
  type AttachmentChoice,
  type BadRow,
  type ChatChoice,
  FRIEND_CHAT,
  GROUP_CHAT,
  paramsOf,
  type Sql,
  STRANGER_CHAT,
  sqlOf,
  val,
} from "./row-specs.ts";

const SEQUOIA_SQL = join(import.meta.dir, "../../../../../shared/fixtures/chatdb/schema-sequoia.sql");

/** A chat.db with Apple's Sequoia schema (our subset when the shared fixture is absent) and three chats. */
export function makeChatDb(path: string) {
  const db = new Database(path, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA busy_timeout = 5000");
  const full = existsSync(SEQUOIA_SQL);
  db.exec(full ? readFileSync(SEQUOIA_SQL, "utf8") : CHAT_DB_SCHEMA_SQL);
  const handle = (id: string) =>
    Number(db.run("INSERT INTO handle (id, service) VALUES (?, 'iMessage')", [id]).lastInsertRowid);
  const chat = (guid: string, style: number, identifier: string) =>
    Number(
      db.run(
        "INSERT INTO chat (guid, style, chat_identifier, service_name, room_name) VALUES (?, ?, ?, 'iMessage', ?)",
        [guid, style, identifier, style === 43 ? identifier : null],
      ).lastInsertRowid,
    );
  const handles = { friend: handle(DM), stranger: handle(STRANGER) };
  const chats = {
    friend: chat(FRIEND_CHAT, 45, DM),
    stranger: chat(STRANGER_CHAT, 45, STRANGER),
    group: chat(GROUP_CHAT, 43, "chat555000111"),
  };
  return { db, handles, chats, full };
}

export type Written = { rowid: number; row: BadRow; visibleGuids: Set<string> };
export type ChatDb = ReturnType<typeof makeChatDb>;
type Context = { nowMs: number; dir: string; existing: string; n: number };

/** A row's date column: the relative kinds from the clock (nanoseconds since 2001, or seconds), or as given. */
function dateOf(date: BadRow["date"], apple: bigint): Sql {
  return date === "now"
    ? val(apple)
    : date === "future"
      ? val(apple + 86_400_000_000_000n)
      : date === "past"
        ? val(apple - 365n * 86_400_000_000_000n)
        : date === "seconds"
          ? val(apple / 1_000_000_000n)
          : date === "seconds float"
            ? val(Number(apple / 1_000_000_000n) + 0.25)
            : date === "nanoseconds float"
              ? val(Number(apple) + 0.5)
              : date;
}

/** The ROWID of a handle or chat row with a garbage id (inserted if new); null when SQLite refuses it. */
function garbageRow(db: Database, table: "handle" | "chat", id: Sql, more: [string, Sql][]) {
  const cols: [string, Sql][] = [[table === "handle" ? "id" : "guid", id], ...more];
  db.run(
    `INSERT OR IGNORE INTO ${table} (${cols.map(([k]) => k).join(", ")}) VALUES (${cols.map(([, v]) => sqlOf(v)).join(", ")})`,
    cols.flatMap(([, v]) => paramsOf(v)) as never[],
  );
  const key = table === "handle" ? "id" : "guid";
  const got = db
    .query(`SELECT ROWID AS r FROM ${table} WHERE ${key} IS ${sqlOf(id)}`)
    .get(...(paramsOf(id) as never[]));
  return (got as { r: number } | null)?.r ?? null;
}

/** Joins message `rowid` to the chats `ch` names (none, missing, several or a garbage one). */
function joinChats(c: ChatDb, rowid: number, ch: ChatChoice): void {
  const { db } = c;
  const join = (chatId: number) =>
    db.run("INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (?, ?, 0)", [
      chatId,
      rowid,
    ]);
  if (ch.k === "friend" || ch.k === "missing+friend" || ch.k === "friend+group") join(c.chats.friend);
  if (ch.k === "stranger") join(c.chats.stranger);
  if (ch.k === "group" || ch.k === "friend+group") join(c.chats.group);
  if (ch.k === "missing" || ch.k === "missing+friend") join(0);
  if (ch.k === "garbage") {
    const id = garbageRow(db, "chat", ch.guid, [
      ["style", ch.style],
      ["chat_identifier", ch.identifier],
    ]);
    if (id !== null) join(id);
  }
}

/** Writes message `rowid`'s attachment rows and joins; returns the GUIDs of those not hidden. */
function writeAttachments(db: Database, rowid: number, list: AttachmentChoice[], ctx: Context): Set<string> {
  const visibleGuids = new Set<string>();
  for (const a of list) {
    if (a.k === "missing row") {
      db.run("INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, 888888)", [rowid]);
      continue;
    }
    const attGuid = crypto.randomUUID();
    const filename =
      a.filename === "existing" ? val(ctx.existing) : a.filename === "directory" ? val(ctx.dir) : a.filename;
    const att = db.run(
      `INSERT INTO attachment (guid, original_guid, filename, transfer_state, hide_attachment, mime_type, total_bytes, transfer_name)
         VALUES (?, ?, ${sqlOf(filename)}, ${sqlOf(a.state)}, ${sqlOf(a.hide)}, ${sqlOf(a.mime)}, ${sqlOf(a.bytes)}, 'file.jpg')`,
      [
        attGuid,
        attGuid,
        ...paramsOf(filename),
        ...paramsOf(a.state),
        ...paramsOf(a.hide),
        ...paramsOf(a.mime),
        ...paramsOf(a.bytes),
      ] as never[],
    );
    db.run("INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, ?)", [
      rowid,
      Number(att.lastInsertRowid),
    ]);
    if (!("v" in a.hide && a.hide.v === 1)) visibleGuids.add(attGuid);
  }
  return visibleGuids;
}

/** Writes one bad row, with its joins and attachments, in one transaction; throws what SQLite refuses. */
export function writeBadRow(c: ChatDb, row: BadRow, ctx: Context): Written {
  const { db } = c;
  const date = dateOf(row.date, appleNanos(ctx.nowMs));
  const h = row.handle;
  const guid = row.guid === "uuid" ? val(`BAD-${ctx.n}-${crypto.randomUUID()}`) : row.guid;
  return db.transaction((): Written => {
    const handleId =
      h.k === "garbage"
        ? garbageRow(db, "handle", h.id, [["service", val("iMessage")]])
        : { friend: c.handles.friend, stranger: c.handles.stranger, nowhere: 987_654, zero: 0, null: null }[
            h.k
          ];
    const cols: [string, Sql][] = [
      ["guid", guid],
      ["text", row.text],
      ["attributedBody", row.body],
      ["handle_id", val(handleId)],
      ["service", val("iMessage")],
      ["date", date],
      ["is_from_me", row.isFromMe],
      ["associated_message_type", row.assocType],
      ["item_type", row.itemType],
    ];
    if (row.at !== undefined) cols.unshift(["ROWID", val(row.at)]);
    else if (row.rowid !== null) {
      const max = (db.query("SELECT MAX(ROWID) AS m FROM message").get() as { m: number | null }).m ?? 0;
      // ROWIDs stay below 2^52: the reader keeps its cursor as a JS number (see the item's notes).
      if (max + row.rowid < 2 ** 52) cols.unshift(["ROWID", val(max + row.rowid)]);
    }
    const rowid = Number(
      db.run(
        `INSERT INTO message (${cols.map(([k]) => k).join(", ")}) VALUES (${cols.map(([, s]) => sqlOf(s)).join(", ")})`,
        cols.flatMap(([, s]) => paramsOf(s)) as never[],
      ).lastInsertRowid,
    );
    joinChats(c, rowid, row.chat);
    const visibleGuids = writeAttachments(db, rowid, row.attachments, ctx);
    return { rowid, row, visibleGuids };
  })();
}

/** SQLite's own constraints refused a row (a NULL or duplicate GUID): not a row any reader can see. */
export const refusedBySqlite = (err: unknown) =>
  String((err as { code?: unknown }).code).startsWith("SQLITE_CONSTRAINT");
