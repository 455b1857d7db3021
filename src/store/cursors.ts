/**
 * Connector cursors: per source, the last processed position (opaque text), when it moved, and the
 * connector's own state kept with it (opaque JSON, e.g. the iMessage backfill fence and pending list).
 * `device_messenger`: a chat.db ROWID; `community_chat`: the Discord connected mark, a snowflake before
 * which every readable message reached gw (community-chat/connected-mark.ts; the per-channel positions
 * live in `channels.cursor`). Written only inside ingest transactions, so position and state always agree.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";

export type CursorRow = { source: Source; position: string; updated_at: number; state: string | null };

export function createCursorStore(db: Database) {
  const get = db.prepare<CursorRow, [string]>("SELECT * FROM connector_cursors WHERE source = ?1");
  const set = db.prepare<unknown, [string, string, number, string | null]>(
    `INSERT INTO connector_cursors (source, position, updated_at, state) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (source) DO UPDATE SET position = excluded.position, updated_at = excluded.updated_at,
       state = COALESCE(excluded.state, state)`,
  );
  return {
    get: (source: Source): CursorRow | null => get.get(source),
    /** Moves the cursor; a null state keeps the stored one. */
    set: (source: Source, position: string, now: number, state: string | null = null): void =>
      void set.run(source, position, now, state),
  };
}

export type CursorStore = ReturnType<typeof createCursorStore>;
