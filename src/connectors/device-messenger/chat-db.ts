/**
 * Read-only access to macOS Messages' chat.db, which it never writes. Every SELECT is built from the columns
 * each table really has (`PRAGMA table_info`), so Ventura through macOS 26 files all work; a missing column
 * reads as NULL. Another program's lock makes a query fail after BUSY_TIMEOUT_MS, never freeze the process;
 * query failures are ChatDbReadError with a message a person can act on.
 */
import { Database } from "bun:sqlite";
import { statSync } from "node:fs";

/**
 * Rows per read and per ingest transaction. Each transaction holds the event loop (the API waits behind
 * it): 250 keeps a catch-up's /healthz and unread p99 near 34 ms where 500 gave 45–61 ms, at the same
 * catch-up throughput (bench backlog).
 */
export const BATCH_ROWS = 250;
/** Rows an edit re-check looks at, at most (recently dated rows carrying an edit time). */
const EDITED_ROWS = 500;
/**
 * How long a read waits for another program's lock on chat.db. bun:sqlite runs on the event loop, so
 * the wait freezes the API, the webhooks and the Discord heartbeat with it; a locked read is simply
 * retried at the next tick (chatdb.md §1), and WAL readers are never blocked by Messages' own writes.
 */
export const BUSY_TIMEOUT_MS = 100;
/** How many rows before a position are looked at to date it (the backfill fence's starting mark). */
export const TAIL_ROWS = 500;

/**
 * The rows each query reads: after a ROWID; by ROWIDs; or dated from an instant on (Apple time, `date`
 * is indexed) and carrying any sign of an edit or an unsend (extensions.md §5: an edit time, a retraction
 * time, `is_empty`, a summary; none is indexed, so they filter that short range), of the columns present.
 */
function whereOf(m: ReadonlySet<string>, by: "after" | "ids" | "edited"): string {
  if (by === "after") return "m.ROWID > ?1";
  if (by === "ids") return "m.ROWID IN (SELECT value FROM json_each(?1))";
  const signs = [
    m.has("date_edited") ? "m.date_edited > 0" : null,
    m.has("date_retracted") ? "m.date_retracted > 0" : null,
    m.has("is_empty") ? "m.is_empty = 1" : null,
    m.has("message_summary_info") ? "m.message_summary_info IS NOT NULL" : null,
  ].filter((s) => s !== null);
  return `m.date >= ?1 AND (${signs.join(" OR ")})`;
}

/** Whether a chat.db can hold edits or unsends at all (Ventura and later). */
export const hasEdits = (m: ReadonlySet<string>): boolean => m.has("date_edited") || m.has("date_retracted");

/** One message row as the connector sees it (see rowQuery for the exact columns). */
export type ChatDbRow = {
  rowid: number;
  guid: string;
  text: string | null;
  body: Uint8Array | null;
  handle: string | null;
  /** The handle's country (`handle.country`, e.g. "us"): the region of a number written without one. */
  handle_country?: string | null;
  service: string | null;
  account: string | null;
  is_from_me: number;
  date_ms: number;
  date_raw: string | null;
  item_type: number | null;
  associated_message_type: number | null;
  /** A tapback's target: `p:N/<GUID>`, `bp:<GUID>` or a bare GUID. */
  associated_message_guid: string | null;
  /** A custom-emoji tapback's emoji (2006, Sequoia+). */
  associated_message_emoji: string | null;
  /** When the row was last edited or unsent (epoch ms); null: never. */
  date_edited: number | null;
  /** While Messages retracts it (epoch ms; cleared again later); null: not now. */
  date_retracted: number | null;
  /** `message_summary_info`: the binary plist of the message's parts and their edit/unsend history. */
  summary: Uint8Array | null;
  balloon_bundle_id: string | null;
  thread_originator_guid: string | null;
  is_empty: number | null;
  chat_guid: string | null;
  chat_style: number | null;
  chat_identifier: string | null;
  chat_service: string | null;
};

export type ChatDbAttachment = {
  guid: string;
  filename: string | null;
  mime_type: string | null;
  uti: string | null;
  transfer_name: string | null;
  transfer_state: number | null;
  total_bytes: number | null;
  hide_attachment: number | null;
};

export type Columns = Record<"message" | "chat" | "handle" | "attachment", ReadonlySet<string>>;

/** A chat's name and people, for the channel list: `participants` are handle ids joined by U+001F. */
export type ChatNameRow = {
  chat_guid: string;
  chat_style: number | null;
  chat_identifier: string | null;
  display_name: string | null;
  participants: string | null;
};

/** Why chat.db cannot be read, in words a person can act on. */
export class ChatDbUnavailable extends Error {}

/** A query on an open chat.db failed (locked by another program, damaged); the message says which. */
export class ChatDbReadError extends Error {
  override name = "ChatDbReadError";
}

/** A date column in epoch milliseconds, converted inside SQL, where integer division is exact. */
const DATE_MS = (col: string) =>
  `(CASE WHEN ${col} > 1000000000000 OR ${col} < -1000000000000 THEN ${col} / 1000000 ELSE ${col} * 1000 END + 978307200000)`;

/**
 * `CAST(table.col AS TEXT)` (or `AS as`) when the column exists, else `NULL AS alias`. Pure. Text columns
 * are read as TEXT and `attributedBody` as BLOB, so a value of another storage class (a blob in `text`, an
 * integer in `guid`) reaches the code as the type its field says.
 */
function pick(
  cols: ReadonlySet<string>,
  table: string,
  col: string,
  alias = col,
  as: "TEXT" | "BLOB" | null = "TEXT",
): string {
  if (!cols.has(col)) return `NULL AS ${alias}`;
  return as ? `CAST(${table}.${col} AS ${as}) AS ${alias}` : `${table}.${col} AS ${alias}`;
}

/**
 * The message query for the columns present: rows after a ROWID (`?1`, at most `?2`), or the rows whose
 * ROWIDs are listed in the JSON array `?1`. Pure.
 */
export function rowQuery(c: Columns, by: "after" | "ids" | "edited" = "after"): string {
  const m = c.message;
  return `
    SELECT m.ROWID AS rowid, CAST(m.guid AS TEXT) AS guid, ${pick(m, "m", "text")},
      ${pick(m, "m", "attributedBody", "body", "BLOB")},
      CAST(h.id AS TEXT) AS handle, ${pick(c.handle, "h", "country", "handle_country")},
      ${pick(m, "m", "service")}, ${pick(m, "m", "account")},
      COALESCE(m.is_from_me, 0) AS is_from_me,
      ${DATE_MS("COALESCE(m.date, 0)")} AS date_ms, CAST(m.date AS TEXT) AS date_raw,
      ${pick(m, "m", "item_type", "item_type", null)}, ${pick(m, "m", "associated_message_type", "associated_message_type", null)},
      ${pick(m, "m", "associated_message_guid")}, ${pick(m, "m", "associated_message_emoji")},
      ${m.has("date_edited") ? `CASE WHEN m.date_edited > 0 THEN ${DATE_MS("m.date_edited")} END` : "NULL"} AS date_edited,
      ${m.has("date_retracted") ? `CASE WHEN m.date_retracted > 0 THEN ${DATE_MS("m.date_retracted")} END` : "NULL"} AS date_retracted,
      ${pick(m, "m", "message_summary_info", "summary", "BLOB")},
      ${pick(m, "m", "balloon_bundle_id")}, ${pick(m, "m", "thread_originator_guid")}, ${pick(m, "m", "is_empty", "is_empty", null)},
      CAST(c.guid AS TEXT) AS chat_guid, ${pick(c.chat, "c", "style", "chat_style", null)}, ${pick(c.chat, "c", "chat_identifier")},
      ${pick(c.chat, "c", "service_name", "chat_service")}
    FROM message m
    LEFT JOIN handle h ON h.ROWID = m.handle_id
    LEFT JOIN chat c ON c.ROWID = (SELECT MIN(j.chat_id) FROM chat_message_join j
      JOIN chat jc ON jc.ROWID = j.chat_id WHERE j.message_id = m.ROWID)
    WHERE ${whereOf(m, by)}
    ORDER BY m.ROWID
    ${by === "ids" ? "" : "LIMIT ?2"}`;
}

/** Every chat's name and participants, or those of the chats whose GUIDs are listed in the JSON array `?1`. */
export function chatNameQuery(c: Columns, some: boolean): string {
  return `
    SELECT CAST(c.guid AS TEXT) AS chat_guid, ${pick(c.chat, "c", "style", "chat_style", null)},
      ${pick(c.chat, "c", "chat_identifier")}, ${pick(c.chat, "c", "display_name", "display_name", "TEXT")},
      (SELECT group_concat(CAST(h.id AS TEXT), char(31)) FROM chat_handle_join j
        JOIN handle h ON h.ROWID = j.handle_id WHERE j.chat_id = c.ROWID) AS participants
    FROM chat c ${some ? "WHERE c.guid IN (SELECT value FROM json_each(?1))" : ""}`;
}

function attachmentQuery(c: Columns, many = false): string {
  const a = c.attachment;
  return `
    SELECT j.message_id AS message_id, CAST(a.guid AS TEXT) AS guid, ${pick(a, "a", "filename")}, ${pick(a, "a", "mime_type")},
      ${pick(a, "a", "uti")}, ${pick(a, "a", "transfer_name")}, ${pick(a, "a", "transfer_state", "transfer_state", null)},
      ${pick(a, "a", "total_bytes", "total_bytes", null)}, ${pick(a, "a", "hide_attachment", "hide_attachment", null)}
    FROM message_attachment_join j JOIN attachment a ON a.ROWID = j.attachment_id
    WHERE ${many ? "j.message_id IN (SELECT value FROM json_each(?1))" : "j.message_id = ?1"}
    ORDER BY j.message_id, j.ROWID`;
}

export interface ChatDb {
  /** The columns each table has (`PRAGMA table_info` at open): what every SELECT here was built from. */
  readonly columns: Columns;
  /** Rows after `cursor`, in ROWID order. */
  rowsAfter(cursor: number, limit?: number): ChatDbRow[];
  /** The rows with these ROWIDs that still exist, in ROWID order. */
  rowsByIds(rowids: readonly number[]): ChatDbRow[];
  /** Rows dated `sinceMs` or later that were edited or unsent (at most `limit`), in ROWID order. */
  editedSince(sinceMs: number, limit?: number): ChatDbRow[];
  /** The newest `date` (epoch ms) among the TAIL_ROWS rows up to `rowid`; null when there are none. */
  dateNear(rowid: number): number | null;
  attachments(rowid: number): ChatDbAttachment[];
  /** The attachments of many rows in one query, by message ROWID, in placeholder order. */
  attachmentsOf(rowids: readonly number[]): Map<number, ChatDbAttachment[]>;
  maxRowid(): number;
  /** The names and people of every chat, or of the chats with these GUIDs. */
  chatNames(guids?: readonly string[]): ChatNameRow[];
  /** Changes whenever another connection commits. */
  dataVersion(): number;
  /** Device and inode of the file, to notice a replaced database. */
  identity(): string;
  close(): void;
}

/** Opens the file read-only (never `immutable`, never a copy) and probes it. */
export function openChatDb(path: string): ChatDb {
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.query("SELECT 1 FROM message LIMIT 1").all();
  } catch (err) {
    throw new ChatDbUnavailable(explain(path, err));
  }
  const columns = (table: string) =>
    new Set((db.query(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((r) => r.name));
  const cols: Columns = {
    message: columns("message"),
    chat: columns("chat"),
    handle: columns("handle"),
    attachment: columns("attachment"),
  };
  const rows = db.query<ChatDbRow, [number, number]>(rowQuery(cols));
  const byIds = db.query<ChatDbRow, [string]>(rowQuery(cols, "ids"));
  const edited = hasEdits(cols.message)
    ? db.query<ChatDbRow, [number, number]>(rowQuery(cols, "edited"))
    : null;
  const near = db.query<{ d: number | null }, [number, number]>(
    `SELECT MAX(${DATE_MS("date")}) AS d FROM message WHERE ROWID <= ?1 AND ROWID > ?1 - ?2`,
  );
  const withBody = (r: ChatDbRow) => ({
    ...r,
    body: r.body ? new Uint8Array(r.body) : null,
    summary: r.summary ? new Uint8Array(r.summary) : null,
  });
  const atts = db.query<ChatDbAttachment, [number]>(attachmentQuery(cols));
  const attsMany = db.query<ChatDbAttachment & { message_id: number }, [string]>(attachmentQuery(cols, true));
  const max = db.query<{ m: number | null }, []>("SELECT MAX(ROWID) AS m FROM message");
  const allNames = db.query<ChatNameRow, []>(chatNameQuery(cols, false));
  const someNames = db.query<ChatNameRow, [string]>(chatNameQuery(cols, true));
  const version = db.query<{ data_version: number }, []>("PRAGMA data_version");
  /** Queries fail as ChatDbReadError, so the connector can tell a chat.db fault from a store fault. */
  const read =
    <A extends unknown[], R>(f: (...a: A) => R) =>
    (...a: A): R => {
      try {
        return f(...a);
      } catch (err) {
        throw new ChatDbReadError(explainRead(path, err), { cause: err });
      }
    };
  return {
    columns: cols,
    rowsAfter: read((cursor: number, limit: number = BATCH_ROWS) => rows.all(cursor, limit).map(withBody)),
    rowsByIds: read((rowids: readonly number[]) =>
      rowids.length === 0 ? [] : byIds.all(JSON.stringify(rowids)).map(withBody),
    ),
    editedSince: read((sinceMs: number, limit: number = EDITED_ROWS) =>
      edited ? edited.all(appleNanosOf(sinceMs), limit).map(withBody) : [],
    ),
    dateNear: read((rowid: number) => near.get(rowid, TAIL_ROWS)?.d ?? null),
    attachments: read((rowid: number) => atts.all(rowid)),
    attachmentsOf: read((rowids: readonly number[]) => {
      const out = new Map<number, ChatDbAttachment[]>();
      for (const a of attsMany.all(JSON.stringify(rowids)))
        out.set(a.message_id, [...(out.get(a.message_id) ?? []), a]);
      return out;
    }),
    maxRowid: read(() => max.get()?.m ?? 0),
    chatNames: read((guids?: readonly string[]) =>
      guids === undefined ? allNames.all() : guids.length === 0 ? [] : someNames.all(JSON.stringify(guids)),
    ),
    dataVersion: read(() => version.get()?.data_version ?? 0),
    identity: () => fileIdentity(path),
    close: () => db.close(),
  };
}

/** Epoch milliseconds as chat.db's `date` (nanoseconds since 2001-01-01). */
export function appleNanosOf(ms: number): number {
  return (ms - 978_307_200_000) * 1_000_000;
}

export function fileIdentity(path: string): string {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return "missing";
  }
}

/** Why a query on an open chat.db failed, in words a person can act on. */
function explainRead(path: string, err: unknown): string {
  const text = String(err instanceof Error ? err.message : err);
  const code = String((err as { code?: string }).code ?? "");
  if (/BUSY|LOCKED/.test(code) || /database is locked/i.test(text))
    return `${path} is locked by another program (${code || "SQLITE_BUSY"}); reading is retried every tick.`;
  if (/CORRUPT|NOTADB/.test(code) || /malformed|not a database/i.test(text))
    return `${path} is damaged or not a database (${text}); reading is retried every tick.`;
  return `Cannot read ${path}: ${text}${code ? ` (${code})` : ""}; reading is retried every tick.`;
}

function explain(path: string, err: unknown): string {
  const text = String(err instanceof Error ? err.message : err);
  const code = (err as { code?: string }).code ?? "";
  if (/authorization denied|not permitted|SQLITE_AUTH|operation not permitted/i.test(`${text} ${code}`)) {
    return `No permission to read ${path}: grant Full Disk Access to the program that runs gw (System Settings → Privacy & Security → Full Disk Access), then restart it.`;
  }
  if (/unable to open|CANTOPEN|no such file/i.test(`${text} ${code}`)) {
    return `Cannot open ${path}: the file is missing (is Messages set up on this Mac?) or Full Disk Access is not granted.`;
  }
  if (/no such table/i.test(text)) return `${path} is not a Messages database (no message table).`;
  return `Cannot read ${path}: ${text}`;
}
