/**
 * The search index (extensions.md §2): FTS5 over the current text of visible messages only, written by
 * the message store itself (search-index.ts) in each change's transaction. Not triggers: an FTS5 write in
 * a trigger runs under a statement savepoint, where FTS5 flushes its pending terms into a new segment, so
 * ingest fell to 0.3× (bench search); explicit writes keep one segment per transaction.
 */
import type { Database } from "bun:sqlite";
import type { Migration, MigrationProgress } from "./migration-types.ts";

/** The tag tokens of search-query.ts (channelTag, sourceTag), written by SQL. */
const TAGS = "'c' || hex(m.channel_id) || ' s' || hex(m.source)";

/**
 * `message_search_rows` maps the FTS rowid (`row`, ascending with arrival: FTS5 flushes on every insert
 * whose rowid is not above the last) to the message (messages is WITHOUT ROWID); rows are never removed,
 * so a deleted message's rowid never comes back. `message_search` is contentless (the text
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
`;

/** Rows indexed per statement of the backfill (and per progress report). */
export const BACKFILL_CHUNK = 20_000;

export const INDEXING_TASK = "indexing messages for search";

/**
 * Indexes the messages already stored: rows numbered in (message_ts, id) order, then the text in chunks,
 * reporting progress after each; then the index is merged into one segment.
 */
function indexStoredMessages(db: Database, progress: MigrationProgress): void {
  db.run(`
    INSERT INTO message_search_rows (row, message_id, message_ts)
      SELECT row_number() OVER (ORDER BY message_ts, id), id, message_ts FROM messages
      WHERE allowlist_status IN ('allowed', 'outbound')`);
  const { total } = db.query("SELECT count(*) AS total FROM message_search_rows").get() as { total: number };
  const fill = db.prepare<unknown, [number, number]>(`
    INSERT INTO message_search (rowid, body, tags)
      SELECT r.row, m.text, ${TAGS} FROM message_search_rows r CROSS JOIN messages m ON m.id = r.message_id
      WHERE r.row BETWEEN ?1 AND ?2`);
  for (let done = 0; done < total; ) {
    const next = Math.min(total, done + BACKFILL_CHUNK);
    fill.run(done + 1, next);
    done = next;
    progress({ task: INDEXING_TASK, done, total });
  }
  db.run("INSERT INTO message_search (message_search) VALUES ('optimize')");
}

export const SEARCH_MIGRATION: Migration = { sql: SCHEMA_SQL, backfill: indexStoredMessages };
