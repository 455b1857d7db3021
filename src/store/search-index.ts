/**
 * Keeps the search index (migration-search.ts) in step with `messages`: the message store's four writes
 * (insert, insertIfNew, setText, markDeleted) are wrapped so each also writes the index, in the same
 * transaction (its caller's, else one of its own). Only visible messages (allowed, outbound) are indexed;
 * an edit re-indexes the text under the same row; a tombstone leaves the index. A new write to
 * messages.text or allowlist_status must come through here too.
 */
import type { Database } from "bun:sqlite";
import type { MessageRow, MessageStore } from "./messages.ts";

type Indexed = Pick<MessageRow, "id" | "channel_id" | "source" | "message_ts" | "allowlist_status">;

const visible = (m: Indexed) => m.allowlist_status === "allowed" || m.allowlist_status === "outbound";

export function createSearchIndex(db: Database) {
  const addRow = db.prepare<unknown, [string, number]>(
    "INSERT INTO message_search_rows (message_id, message_ts) VALUES (?1, ?2)",
  );
  const rowOf = db.prepare<{ row: number }, [string]>(
    "SELECT row FROM message_search_rows WHERE message_id = ?1",
  );
  // The tags of search-query.ts (channelTag, sourceTag), written as SQL.
  const addText = db.prepare<unknown, [number, string, string, string]>(
    "INSERT INTO message_search (rowid, body, tags) VALUES (?1, ?2, 'c' || hex(?3) || ' s' || hex(?4))",
  );
  const removeText = db.prepare<unknown, [number]>("DELETE FROM message_search WHERE rowid = ?1");
  return {
    /** A message just stored. */
    added(m: Indexed & { text: string }): void {
      if (!visible(m)) return;
      const row = Number(addRow.run(m.id, m.message_ts).lastInsertRowid);
      addText.run(row, m.text, m.channel_id, m.source);
    },
    /** A stored message (as it was) whose text is now `text`. */
    edited(m: Indexed, text: string): void {
      const row = visible(m) ? rowOf.get(m.id)?.row : undefined;
      if (row === undefined) return;
      removeText.run(row);
      addText.run(row, text, m.channel_id, m.source);
    },
    /** A stored message (as it was) that is now a tombstone. Its row is kept, never reused. */
    removed(m: Indexed): void {
      const row = visible(m) ? rowOf.get(m.id)?.row : undefined;
      if (row !== undefined) removeText.run(row);
    },
  };
}

/** The message store with every write to text or visibility also written to the search index. */
export function withSearchIndex(messages: MessageStore, db: Database): MessageStore {
  const index = createSearchIndex(db);
  // A nested db.transaction would be a SAVEPOINT, at which FTS5 flushes its pending terms: only open one
  // when the caller has none.
  const atomic = <T>(work: () => T): T => (db.inTransaction ? work() : db.transaction(work).immediate());
  return {
    ...messages,
    insert: (row) =>
      atomic(() => {
        messages.insert(row);
        index.added(row);
      }),
    insertIfNew: (row) =>
      atomic(() => {
        const stored = messages.insertIfNew(row);
        if (stored) index.added(row);
        return stored;
      }),
    setText: (id, text) =>
      atomic(() => {
        const before = messages.get(id);
        messages.setText(id, text);
        if (before) index.edited(before, text);
      }),
    markDeleted: (id) =>
      atomic(() => {
        const before = messages.get(id);
        messages.markDeleted(id);
        if (before) index.removed(before);
      }),
  };
}
