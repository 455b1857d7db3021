/**
 * Channels observed inbound. A send is accepted only to a channel listed here (spec E.1), and the
 * row keeps the platform reference a connector needs to send there (chat GUID, Discord channel id).
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
};

export function createChannelStore(db: Database) {
  const observe = db.prepare<unknown, [string, string, string, string, number]>(
    `INSERT INTO channels (id, source, channel_type, platform_ref, first_inbound_at, last_inbound_at)
     VALUES (?1, ?2, ?3, ?4, ?5, ?5)
     ON CONFLICT (id) DO UPDATE SET platform_ref = excluded.platform_ref,
       last_inbound_at = max(last_inbound_at, excluded.last_inbound_at)`,
  );
  const get = db.prepare<ChannelRow, [string]>("SELECT * FROM channels WHERE id = ?1");
  return {
    observeInbound: (
      c: { id: string; source: Source; type: ChannelType; platformRef: string },
      at: number,
    ): void => void observe.run(c.id, c.source, c.type, c.platformRef, at),
    get: (id: string): ChannelRow | null => get.get(id),
  };
}

export type ChannelStore = ReturnType<typeof createChannelStore>;
