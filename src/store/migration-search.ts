/**
 * The search index (extensions.md §2): an FTS5 table over the current text of visible messages (allowed,
 * outbound) and nothing else, kept by triggers on `messages` in the writing statement's own transaction, so
 * every path that writes a message (ingest, outbound records, edits, tombstones, any later one) keeps it in
 * step without remembering to. A migration that rebuilds `messages` drops these triggers: recreate them.
 */
import type { Database } from "bun:sqlite";
import type { Migration, MigrationProgress } from "./migrations.ts";

const VISIBLE = (row: "NEW" | "OLD") => `${row}.allowlist_status IN ('allowed', 'outbound')`;
const TAGS = (row: "NEW" | "OLD" | "m") => `'c' || hex(${row}.channel_id) || ' s' || hex(${row}.source)`;
/** The next index row: one below the lowest, so newer messages have lower rows (FTS5 scans up faster). */
const NEXT_ROW = "(SELECT coalesce(min(row), 0) - 1 FROM message_search_rows)";

/**
 * `message_search_rows` maps the FTS rowid (`row`) to the message (messages is WITHOUT ROWID); a row is
 * never reused, so a deleted message's rowid never comes back. `message_search` is contentless (the text
 * stays in messages) with contentless_delete; `body` is the text, `tags` the channel and source tokens.
 * Small pages (pgsz 1000) make the seeks of an AND over a common word about 2.5× cheaper.
 */
const SCHEMA_SQL = `
  CREATE TABLE message_search_rows (
    row         INTEGER PRIMARY KEY,
    message_id  TEXT NOT NULL UNIQUE,
    message_ts  INTEGER NOT NULL
  );
  CREATE VIRTUAL TABLE message_search USING fts5(
    body, tags, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
  );
  INSERT INTO message_search (message_search, rank) VALUES ('pgsz', 1000);

  CREATE TRIGGER messages_search_insert AFTER INSERT ON messages WHEN ${VISIBLE("NEW")} BEGIN
    INSERT INTO message_search_rows (row, message_id, message_ts) VALUES (${NEXT_ROW}, NEW.id, NEW.message_ts);
    INSERT INTO message_search (rowid, body, tags) VALUES (last_insert_rowid(), NEW.text, ${TAGS("NEW")});
  END;
  CREATE TRIGGER messages_search_update AFTER UPDATE OF text, allowlist_status, channel_id, source ON messages
  WHEN ${VISIBLE("OLD")} OR ${VISIBLE("NEW")} BEGIN
    DELETE FROM message_search
      WHERE ${VISIBLE("OLD")} AND rowid = (SELECT row FROM message_search_rows WHERE message_id = OLD.id);
    INSERT OR IGNORE INTO message_search_rows (row, message_id, message_ts)
      SELECT ${NEXT_ROW}, NEW.id, NEW.message_ts WHERE ${VISIBLE("NEW")};
    INSERT INTO message_search (rowid, body, tags)
      SELECT row, NEW.text, ${TAGS("NEW")} FROM message_search_rows WHERE message_id = NEW.id AND ${VISIBLE("NEW")};
  END;
  CREATE TRIGGER messages_search_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_search
      WHERE ${VISIBLE("OLD")} AND rowid = (SELECT row FROM message_search_rows WHERE message_id = OLD.id);
    DELETE FROM message_search_rows WHERE message_id = OLD.id;
  END;
`;

/** Rows indexed per statement of the backfill (and per progress report). */
export const BACKFILL_CHUNK = 20_000;

export const INDEXING_TASK = "indexing messages for search";

/**
 * Indexes the messages already stored: rows numbered in (message_ts, id) order, the newest lowest, then
 * the text in chunks, reporting progress after each; then the index is merged into one segment.
 */
function indexStoredMessages(db: Database, progress: MigrationProgress): void {
  db.run(`
    INSERT INTO message_search_rows (row, message_id, message_ts)
      SELECT -row_number() OVER (ORDER BY message_ts, id), id, message_ts FROM messages
      WHERE allowlist_status IN ('allowed', 'outbound')`);
  const { total } = db.query("SELECT count(*) AS total FROM message_search_rows").get() as { total: number };
  const fill = db.prepare<unknown, [number, number]>(`
    INSERT INTO message_search (rowid, body, tags)
      SELECT r.row, m.text, ${TAGS("m")} FROM message_search_rows r CROSS JOIN messages m ON m.id = r.message_id
      WHERE r.row BETWEEN ?1 AND ?2`);
  for (let done = 0; done < total; ) {
    const next = Math.min(total, done + BACKFILL_CHUNK);
    fill.run(-next, -(done + 1));
    done = next;
    progress({ task: INDEXING_TASK, done, total });
  }
  db.run("INSERT INTO message_search (message_search) VALUES ('optimize')");
}

export const SEARCH_MIGRATION: Migration = { sql: SCHEMA_SQL, backfill: indexStoredMessages };
