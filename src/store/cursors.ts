/**
 * Connector cursors: per source, the last processed position (opaque text: a chat.db ROWID, a
 * Discord snowflake) and when it moved. Written only inside ingest transactions.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";

export type CursorRow = { source: Source; position: string; updated_at: number };

export function createCursorStore(db: Database) {
  const get = db.prepare<CursorRow, [string]>("SELECT * FROM connector_cursors WHERE source = ?1");
  const set = db.prepare<unknown, [string, string, number]>(
    `INSERT INTO connector_cursors (source, position, updated_at) VALUES (?1, ?2, ?3)
     ON CONFLICT (source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at`,
  );
  return {
    get: (source: Source): CursorRow | null => get.get(source),
    set: (source: Source, position: string, now: number): void => void set.run(source, position, now),
  };
}

export type CursorStore = ReturnType<typeof createCursorStore>;
