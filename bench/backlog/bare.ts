/**
 * Child process of bench/backlog/backlog.ts: the bare copy catch-up is compared with ([speed] item 3) — what a
 * program written with nothing but `bun:sqlite` would do to keep the same rows durably.
 *
 *   bun run bench/backlog/bare.ts <chat.db> <after ROWID> <database path>
 *
 * Reads the rows after <after ROWID> with gw's read query (openChatDb().rowsAfter, BATCH_ROWS at a time: the
 * same rows, read the same way) and stores each as one message row (rowid table, appended) with its
 * GUID as the unique key that makes a re-read harmless, the text and the same `raw` payload gw keeps
 * (rawOf), plus the reader's position, one transaction per batch, WAL, synchronous=FULL. A plain schema:
 * one table and its unique key, no other index, no delivery rows (the benchmark runs without webhooks).
 * No decoding, classification, allowlist or read models. (Keyed by the GUID itself, WITHOUT ROWID, it
 * was slower than gw: random inserts into the whole table.) Prints `{"rows","ms"}` and exits.
 */
import { Database } from "bun:sqlite";
import { BATCH_ROWS, openChatDb } from "../../src/connectors/device-messenger/chat-db.ts";
import { rawOf } from "../../src/connectors/device-messenger/rows.ts";

const [chatDbPath, afterArg, dbPath] = process.argv.slice(2);
if (!chatDbPath || !afterArg || !dbPath) {
  process.stderr.write("usage: bun run bench/backlog/bare.ts <chat.db> <after ROWID> <database path>\n");
  process.exit(2);
}
const chat = openChatDb(chatDbPath);
const db = new Database(dbPath, { create: true });
db.run("PRAGMA journal_mode = WAL");
db.run("PRAGMA synchronous = FULL");
db.run(`CREATE TABLE messages (
  id          INTEGER PRIMARY KEY,
  guid        TEXT NOT NULL UNIQUE,
  chat        TEXT NOT NULL,
  sender      TEXT NOT NULL,
  text        TEXT NOT NULL,
  message_ts  INTEGER NOT NULL,
  raw         TEXT NOT NULL
)`);
db.run("CREATE TABLE position (id INTEGER PRIMARY KEY CHECK (id = 1), rowid INTEGER NOT NULL)");
const insert = db.prepare<unknown, [string, string, string, string, number, string]>(
  "INSERT OR IGNORE INTO messages (guid, chat, sender, text, message_ts, raw) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
);
const advance = db.prepare<unknown, [number]>("INSERT OR REPLACE INTO position (id, rowid) VALUES (1, ?1)");

let cursor = Number(afterArg);
let rows = 0;
const t0 = performance.now();
for (;;) {
  const batch = chat.rowsAfter(cursor, BATCH_ROWS);
  if (batch.length === 0) break;
  const last = batch.at(-1)?.rowid as number;
  db.transaction(() => {
    for (const r of batch)
      insert.run(
        r.guid,
        r.chat_identifier ?? r.chat_guid ?? "",
        r.handle ?? "",
        r.text ?? "",
        r.date_ms,
        JSON.stringify(rawOf(r, [])),
      );
    advance.run(last);
  })();
  rows += batch.length;
  cursor = last;
}
const ms = performance.now() - t0;
db.close();
chat.close();
process.stdout.write(`${JSON.stringify({ rows, ms })}\n`);
