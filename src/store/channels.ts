/**
 * Channels observed inbound. A send is accepted only to a channel listed here (spec E.1), and the
 * row keeps the platform reference a connector needs to send there (chat GUID, Discord channel id).
 * `cursor` is a connector's position inside the channel (Discord: the newest message id processed),
 * written only inside ingest transactions; positions are decimal integers and only move forward.
 */
import type { Database } from "bun:sqlite";
import type { ChannelType, Source } from "../core/envelope.ts";

export type ChannelRow = {
  id: string;
  source: Source;
  channel_type: ChannelType;
  platform_ref: string;
  first_inbound_at: number;
  last_inbound_at: number;
  cursor: string | null;
};

/** `a > b` for decimal integers of any length (no leading zeros), as SQL on text. */
const LATER = (a: string, b: string) =>
  `(length(${a}) > length(${b}) OR (length(${a}) = length(${b}) AND ${a} > ${b}))`;

export function createChannelStore(db: Database) {
  const observe = db.prepare<unknown, [string, string, string, string, number]>(
    `INSERT INTO channels (id, source, channel_type, platform_ref, first_inbound_at, last_inbound_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?5)
     ON CONFLICT (id) DO UPDATE SET platform_ref = excluded.platform_ref,
       last_inbound_at = max(last_inbound_at, excluded.last_inbound_at)`,
  );
  const get = db.prepare<ChannelRow, [string]>("SELECT * FROM channels WHERE id = ?1");
  const bySource = db.prepare<ChannelRow, [string]>("SELECT * FROM channels WHERE source = ?1 ORDER BY id");
  const advance = db.prepare<unknown, [string, string]>(
    `UPDATE channels SET cursor = ?2 WHERE id = ?1 AND (cursor IS NULL OR ${LATER("?2", "cursor")})`,
  );
  return {
    observeInbound: (
      c: { id: string; source: Source; type: ChannelType; platformRef: string },
      at: number,
    ): void => void observe.run(c.id, c.source, c.type, c.platformRef, at),
    get: (id: string): ChannelRow | null => get.get(id),
    /** Every channel of one source observed inbound. */
    ofSource: (source: Source): ChannelRow[] => bySource.all(source),
    /** Moves the channel's cursor to `position` if that is later (no-op for an unknown channel). */
    advanceCursor: (id: string, position: string): void => void advance.run(id, position),
  };
}

export type ChannelStore = ReturnType<typeof createChannelStore>;
