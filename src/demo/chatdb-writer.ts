/**
 * Writes chat.db rows the way macOS Messages does, for `gw demo` and tests (never for a real chat.db; the
 * shapes are in chatdb-spec.ts, bodies and summaries in chatdb-bodies.ts). Dates are nanoseconds since 2001
 * as exact bigints; bodies go to `attributedBody` (text NULL) unless asked otherwise, a part run per text
 * piece and attachment; join rows follow their message row, and Apple's triggers fill the caches. One
 * message is one transaction; `joinChat: false` leaves the chat join out. Any release's schema will do.
 */
import { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, join } from "node:path";
import { encodeBody } from "../connectors/device-messenger/typedstream.ts";
import {
  bodyOf,
  editedColumns,
  type Piece,
  partlyUnsentColumns,
  type StoredRow,
  unsentColumns,
} from "./chatdb-bodies.ts";
import { type ColumnWriter, createColumnWriter, type Values } from "./chatdb-columns.ts";
import { CHAT_DB_SCHEMA_SQL } from "./chatdb-schema.ts";
import {
  APPLE_EPOCH_MS,
  type AttachmentSpec,
  appleGuid,
  appleNanos,
  type ChatDbWriter,
  type ChatDbWriterOptions,
  type ChatSpec,
  fileTypeOf,
  type MessageSpec,
  NS_PER_MS,
  TRANSFER_FINISHED,
  type UnsendShape,
} from "./chatdb-spec.ts";

export * from "./chatdb-spec.ts";

function sizeOf(path: string): number {
  const resolved = path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
  try {
    return statSync(resolved).size;
  } catch {
    return 0;
  }
}

function openDb(path: string, schemaSql: string): Database {
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  const hasMessage = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'message'").get();
  if (!hasMessage) db.exec(schemaSql);
  return db;
}

const SQL = {
  handleInsert: "INSERT OR IGNORE INTO handle (id, service) VALUES ($id, $service)",
  handleGet: "SELECT ROWID AS rowid FROM handle WHERE id = $id AND service = $service",
  chatGet: "SELECT ROWID AS rowid, service_name AS service FROM chat WHERE guid = $guid",
  chatHandle: "INSERT OR IGNORE INTO chat_handle_join (chat_id, handle_id) VALUES ($chat, $handle)",
  chatMessage:
    "INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES ($chat, $message, $date)",
  messageDate: "SELECT date FROM message WHERE ROWID = $rowid",
  messageAttachment:
    "INSERT INTO message_attachment_join (message_id, attachment_id) VALUES ($message, $attachment)",
  maxRowid: "SELECT MAX(ROWID) AS m FROM message",
  rename: "UPDATE chat SET display_name = $name WHERE guid = $guid",
} as const;

/** The open chat.db and its column-aware row writer (any release's schema). */
type Db = { sql: Database; rows: ColumnWriter };
type Params = Record<string, string | number | bigint | Uint8Array | null>;

const run = (db: Db, sql: string, params: Params = {}) => db.sql.query(sql).run(params);
const get = <T>(db: Db, sql: string, params: Params = {}) => db.sql.query<T, [Params]>(sql).get(params);

function getOrCreateHandle(db: Db, id: string, service: string): number {
  run(db, SQL.handleInsert, { id, service });
  const row = get<{ rowid: number }>(db, SQL.handleGet, { id, service });
  if (!row) throw new Error(`handle ${id} (${service}) was not stored`);
  return row.rowid;
}

function findChat(db: Db, guid: string): { rowid: number; service: string | null } {
  const row = get<{ rowid: number; service: string | null }>(db, SQL.chatGet, { guid });
  if (!row) throw new Error(`no chat with guid ${guid}`);
  return row;
}

function getOrCreateChat(db: Db, c: ChatSpec): number {
  const service = c.serviceName ?? "iMessage";
  let row = get<{ rowid: number }>(db, SQL.chatGet, { guid: c.guid });
  if (!row) {
    db.rows.insert("chat", {
      guid: c.guid,
      style: c.style,
      state: 3,
      chat_identifier: c.chatIdentifier,
      service_name: service,
      room_name: c.style === 43 ? c.chatIdentifier : null,
      display_name: c.displayName ?? null,
      is_filtered: 0,
    });
    row = findChat(db, c.guid);
  }
  for (const p of c.participants) {
    run(db, SQL.chatHandle, { chat: row.rowid, handle: getOrCreateHandle(db, p, service) });
  }
  return row.rowid;
}

/** A message's attachments with the GUIDs their rows get (the body's runs name them). */
type Planned = { spec: AttachmentSpec; guid: string }[];

/** The pieces of a message in body order: its `pieces`, else its attachments (and late placeholders), then its text. */
function piecesOf(m: MessageSpec, planned: Planned): Piece[] {
  const guids = new Map(planned.map((p) => [p.spec, p.guid]));
  const attachment = (a: AttachmentSpec): Piece => ({
    attachmentGuid: guids.get(a) as string,
    ...(m.audioTranscript !== undefined ? { transcript: m.audioTranscript } : {}),
  });
  if (m.pieces) return m.pieces.map((p) => (typeof p === "string" ? { text: p } : attachment(p)));
  const late = Array.from({ length: m.placeholders ?? 0 }, () => ({ attachmentGuid: appleGuid() }));
  return [...(m.attachments ?? []).map(attachment), ...late, ...(m.text === "" ? [] : [{ text: m.text }])];
}

/** The body columns Messages stores: `attributedBody` with a part run per piece (and `text` if asked). */
function bodyColumns(m: MessageSpec, planned: Planned) {
  const body = bodyOf(piecesOf(m, planned));
  if (body.text === "" && (m.itemType ?? 0) !== 0) return { text: null, body: null, empty: false };
  const form = m.bodyForm ?? "attributedBody";
  return {
    text: form === "attributedBody" ? null : body.text,
    body: form === "text" ? null : encodeBody(body),
    empty: body.text === "",
  };
}

function insertAttachment(
  db: Db,
  messageRowid: number,
  a: AttachmentSpec,
  outgoing: boolean,
  dateNs: bigint,
  guid = appleGuid(),
) {
  const guessed = fileTypeOf(a.transferName ?? a.path);
  const attachment = db.rows.insert("attachment", {
    guid,
    created_date: dateNs / 1_000_000_000n,
    filename: a.path,
    uti: a.uti === undefined ? guessed.uti : a.uti,
    mime_type: a.mimeType === undefined ? guessed.mimeType : a.mimeType,
    transfer_state: a.transferState ?? TRANSFER_FINISHED,
    is_outgoing: outgoing ? 1 : 0,
    transfer_name: a.transferName ?? basename(a.path),
    total_bytes: a.totalBytes ?? sizeOf(a.path),
    original_guid: guid,
  });
  run(db, SQL.messageAttachment, { message: messageRowid, attachment });
  return { guid };
}

function insertAttachments(
  db: Db,
  messageRowid: number,
  m: MessageSpec,
  planned: Planned,
  dateNs: bigint,
): void {
  for (const p of planned) insertAttachment(db, messageRowid, p.spec, m.isFromMe === true, dateNs, p.guid);
}

function insertMessage(db: Db, m: MessageSpec, account: string, now: () => number) {
  const chat = m.chatGuid === null ? null : findChat(db, m.chatGuid);
  const service = m.service ?? chat?.service ?? "iMessage";
  const fromMe = m.isFromMe === true;
  const handle = m.from !== null ? getOrCreateHandle(db, m.from, service) : 0;
  const date = m.dateNs ?? appleNanos(m.dateMs ?? now());
  const guid = m.guid ?? appleGuid();
  const specs = m.pieces
    ? m.pieces.filter((p): p is AttachmentSpec => typeof p !== "string")
    : (m.attachments ?? []);
  const planned: Planned = specs.map((spec) => ({ spec, guid: appleGuid() }));
  const pieces = piecesOf(m, planned);
  const { text, body, empty } = bodyColumns(m, planned);
  const thread = m.threadOriginatorGuid ?? null;
  const rowid = db.rows.insert("message", {
    guid,
    text,
    attributedBody: body,
    handle_id: handle,
    service,
    account,
    date,
    date_read: 0,
    date_delivered: fromMe ? date : 0,
    is_delivered: 1,
    is_finished: 1,
    is_from_me: fromMe ? 1 : 0,
    is_empty: empty ? 1 : 0,
    is_read: 0,
    is_sent: fromMe ? 1 : 0,
    item_type: m.itemType ?? 0,
    group_title: m.groupTitle ?? null,
    group_action_type: m.groupActionType ?? 0,
    associated_message_guid: m.associatedMessageGuid ?? null,
    associated_message_type: m.associatedMessageType ?? 0,
    associated_message_emoji: m.associatedMessageEmoji ?? null,
    thread_originator_guid: thread,
    thread_originator_part: thread === null ? null : (m.threadOriginatorPart ?? "0:0:0"),
    part_count: pieces.length,
    is_audio_message: m.audioTranscript !== undefined ? 1 : 0,
  });
  if (chat && m.joinChat !== false) run(db, SQL.chatMessage, { chat: chat.rowid, message: rowid, date });
  insertAttachments(db, rowid, m, planned, date);
  return { rowid, guid };
}

/** A row as an edit or an unsend reads it; throws on a release whose chat.db cannot hold either. */
function storedRow(db: Db, rowid: number, what: "edit" | "unsend"): StoredRow {
  if (!db.rows.has("message", "date_edited"))
    throw new Error(`this chat.db cannot ${what} (no date_edited: Messages of this release cannot)`);
  const stmt = db.sql.query<
    { body: Uint8Array | null; text: string | null; summary: Uint8Array | null; date: bigint | null },
    [number]
  >(
    `SELECT attributedBody AS body, text, ${db.rows.has("message", "message_summary_info") ? "message_summary_info" : "NULL"} AS summary, date FROM message WHERE ROWID = ?`,
  );
  const row = stmt.safeIntegers(true).get(rowid);
  stmt.safeIntegers(false);
  if (!row) throw new Error(`no message with ROWID ${rowid}`);
  const dateMs = Number((row.date ?? 0n) / NS_PER_MS) + APPLE_EPOCH_MS;
  return { body: row.body ? new Uint8Array(row.body) : null, text: row.text, summary: row.summary, dateMs };
}

/** The columns an unsend of `shape` writes (UnsendShape). */
function unsendColumns(old: StoredRow, shape: UnsendShape, atNs: bigint): Values {
  if (shape === "is_empty") return { text: null, attributedBody: null, is_empty: 1, date_edited: atNs };
  if (shape === "retracted") return { date_retracted: atNs };
  if (shape === "summary") return { message_summary_info: unsentColumns(old).message_summary_info };
  if (shape === "emptied")
    return { text: null, attributedBody: unsentColumns(old).attributedBody, date_edited: atNs };
  return { text: null, ...unsentColumns(old), date_retracted: atNs, date_edited: atNs };
}

function joinLate(db: Db, rowid: number, chatGuid: string): void {
  const chat = findChat(db, chatGuid);
  const stmt = db.sql.query<{ date: bigint | null }, [Params]>(SQL.messageDate);
  const row = stmt.safeIntegers(true).get({ rowid });
  stmt.safeIntegers(false);
  if (!row) throw new Error(`no message with ROWID ${rowid}`);
  run(db, SQL.chatMessage, { chat: chat.rowid, message: rowid, date: row.date ?? 0n });
}

export function openChatDbWriter(path: string, opts: ChatDbWriterOptions = {}): ChatDbWriter {
  const sql = openDb(path, opts.schemaSql ?? CHAT_DB_SCHEMA_SQL);
  const db: Db = { sql, rows: createColumnWriter(sql) };
  const now = opts.now ?? Date.now;
  const account = opts.account ?? "E:me@example.com";
  return {
    db: sql,
    handle: (id, service = "iMessage") => getOrCreateHandle(db, id, service),
    chat: (c) => sql.transaction(() => getOrCreateChat(db, c)).immediate(),
    message: (m) => sql.transaction(() => insertMessage(db, m, account, now)).immediate(),
    joinChat: (rowid, chatGuid) => joinLate(db, rowid, chatGuid),
    edit: (rowid, text) => {
      const old = storedRow(db, rowid, "edit");
      const at = now();
      db.rows.update("message", rowid, {
        text: null,
        ...editedColumns(old, text, at),
        date_edited: appleNanos(at),
      });
    },
    unsend: (rowid, shape = "real") => {
      const old = storedRow(db, rowid, "unsend");
      db.rows.update("message", rowid, unsendColumns(old, shape, appleNanos(now())));
    },
    unsendParts: (rowid, parts) => {
      const old = storedRow(db, rowid, "unsend");
      db.rows.update("message", rowid, {
        ...partlyUnsentColumns(old, parts),
        date_edited: appleNanos(now()),
      });
    },
    clearRetraction: (rowid) => void db.rows.update("message", rowid, { date_retracted: 0 }),
    renameChat: (chatGuid, name, by) =>
      sql
        .transaction(() => {
          run(db, SQL.rename, { guid: chatGuid, name });
          return insertMessage(
            db,
            { chatGuid, from: by, isFromMe: by === null, text: "", itemType: 2, groupTitle: name },
            account,
            now,
          );
        })
        .immediate(),
    attach: (rowid, a) =>
      sql.transaction(() => insertAttachment(db, rowid, a, false, appleNanos(now()))).immediate(),
    updateAttachment: (guid, change) => {
      const sets = [
        change.transferState === undefined ? null : ["transfer_state", change.transferState],
        change.path === undefined ? null : ["filename", change.path],
        change.totalBytes === undefined ? null : ["total_bytes", change.totalBytes],
      ].filter((x): x is [string, string | number] => x !== null);
      if (sets.length === 0) return;
      sql
        .query(`UPDATE attachment SET ${sets.map(([c]) => `${c} = ?`).join(", ")} WHERE guid = ?`)
        .run(...sets.map(([, v]) => v), guid);
    },
    maxRowid: () => get<{ m: number | null }>(db, SQL.maxRowid)?.m ?? 0,
    close: () => sql.close(),
  };
}
