/**
 * The stores bench/search/search.ts measures. `seedBase` writes ROWS messages over CHANNELS channels into a
 * database at the schema before search (so the migration can be timed on it), shaped as ingest shapes
 * rows (status, person and name from allowlist.lookup), DELETED_SHARE of the allowed ones then turned
 * into tombstones; it keeps a sample of visible messages (channel, word ranks) to build queries from.
 * The messages are written at the schema before the channel list, which migration 5 then counts as on
 * an upgraded install (the bare message store used here does not keep it), so both ingest stores start
 * with the channel list gw would have.
 */
import { createIdFactory } from "../../src/core/ids.ts";
import { createChannelStore } from "../../src/store/channels.ts";
import { createMessageStore } from "../../src/store/messages.ts";
import { SEARCH_MIGRATION } from "../../src/store/migration-search.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { migrate, openDatabase } from "../../src/store/open.ts";
import { messageRow } from "../lib/seed.ts";
import { CHANNELS, DELETED_SHARE, INSERT_CHUNK, ROWS, rng, START_MS } from "./settings.ts";
import { type Generated, generate, normalizedOf, type World } from "./world.ts";

/** A visible stored message queries are built from. */
export interface Sample {
  channelId: string;
  ranks: number[];
}

export const SAMPLE_EVERY = 200;
export const SEARCH_VERSION = MIGRATIONS.indexOf(SEARCH_MIGRATION) + 1;
/** Migration 5, the channel list, is the one before search. */
const LIST_VERSION = SEARCH_VERSION - 1;

/** Seeds `path` at the schema before search; returns the samples and the counts per status. */
export function seedBase(path: string, world: World) {
  const db = openDatabase(path, { migrations: MIGRATIONS.slice(0, LIST_VERSION - 1), name: "bench" });
  db.run("PRAGMA cache_size = -262144");
  const messages = createMessageStore(db);
  let now = START_MS;
  const ids = createIdFactory({ now: () => now });
  const samples: Sample[] = [];
  const toDelete: string[] = [];
  const counts = { allowed: 0, unknown: 0, outbound: 0, deleted: 0 };
  const lastInbound = new Map<string, { channel: Generated["channel"]; at: number }>();
  for (let start = 0; start < ROWS; start += INSERT_CHUNK) {
    db.transaction(() => {
      for (let i = start; i < Math.min(ROWS, start + INSERT_CHUNK); i++) {
        const g = generate(world, i);
        now = g.messageTs;
        const m = normalizedOf(g, i);
        const row = messageRow(m, ids.message(), world.allowlist.lookup(m.source, m.sender.id), {
          createdAt: g.messageTs,
        });
        messages.insert(row);
        const status = row.allowlist_status as "allowed" | "unknown" | "outbound";
        counts[status]++;
        const deleted = status === "allowed" && rng() < DELETED_SHARE;
        if (deleted) toDelete.push(row.id);
        else if (status !== "unknown" && i % SAMPLE_EVERY === 0)
          samples.push({ channelId: g.channel.id, ranks: g.ranks });
        if (g.direction === "inbound") lastInbound.set(g.channel.id, { channel: g.channel, at: now });
      }
    }).immediate();
  }
  db.transaction(() => {
    for (const id of toDelete) messages.markDeleted(id);
    const channels = createChannelStore(db);
    for (const { channel, at } of lastInbound.values()) channels.observeInbound(channel, at);
  }).immediate();
  counts.allowed -= toDelete.length;
  counts.deleted = toDelete.length;
  migrate(db, { migrations: MIGRATIONS.slice(0, LIST_VERSION), name: "bench" });
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  return { samples, counts, channels: CHANNELS };
}
