/**
 * Keeps the search index (migration-search.ts) in step with `messages`: the message store's four writes
 * (insert, insertIfNew, setText, markDeleted) also write the index in the same transaction
 * (store/message-writes.ts). Visible messages only (allowed, outbound); an edit re-indexes under the same row; a
 * tombstone leaves the index. A new write to messages.text or allowlist_status must come through here.
 */
import type { Database } from "bun:sqlite";
import { createHeldWrites } from "./held-writes.ts";
import type { MessageRow } from "./messages.ts";

type Indexed = Pick<MessageRow, "id" | "channel_id" | "source" | "message_ts" | "allowlist_status">;
type Op = { row: number; text: string; channel: string; source: string } | { row: number; text: null };

const visible = (m: Indexed) => m.allowlist_status === "allowed" || m.allowlist_status === "outbound";

/**
 * FTS5 flushes its pending terms into a new segment whenever a statement opens a savepoint (any write
 * with a trigger does), so inside the store's transactions the FTS writes are held and made together
 * when the work returns (`deferred`, held-writes.ts); elsewhere they are made at once. The row map is
 * written at once.
 */
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
  const apply = (op: Op) =>
    op.text === null ? removeText.run(op.row) : addText.run(op.row, op.text, op.channel, op.source);
  const held = createHeldWrites<Op>((ops) => {
    for (const op of ops) apply(op);
  });
  const write = held.write;
  const rowIfVisible = (m: Indexed) => (visible(m) ? rowOf.get(m.id)?.row : undefined);

  return {
    /** A message just stored. */
    added(m: Indexed & { text: string }): void {
      if (!visible(m)) return;
      const row = Number(addRow.run(m.id, m.message_ts).lastInsertRowid);
      write({ row, text: m.text, channel: m.channel_id, source: m.source });
    },
    /** A stored message (as it was) whose text is now `text`. */
    edited(m: Indexed, text: string): void {
      const row = rowIfVisible(m);
      if (row === undefined) return;
      write({ row, text: null });
      write({ row, text, channel: m.channel_id, source: m.source });
    },
    /** A stored message (as it was) that is now a tombstone. Its row is kept, never reused. */
    removed(m: Indexed): void {
      const row = rowIfVisible(m);
      if (row !== undefined) write({ row, text: null });
    },
    /** Runs `work` inside a transaction, holding the FTS writes until it returns (dropped if it throws). */
    deferred: held.scope,
  };
}

export type SearchIndex = ReturnType<typeof createSearchIndex>;
