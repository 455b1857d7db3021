/**
 * How the benchmarks' seeders write a store: through gw's own ingest (`seedIngest`, built as a
 * connector's ingest is, on a clock the seeder moves; a store world's message as a connector hands it
 * over, `normalized`), or past it with store.messages.insert, a row shaped as ingest shapes it
 * (`messageRow`); agents' read marks in bulk, turned into read runs by the
 * store's own rebuildRuns (`insertReadMarks`); and counts by a column (`countBy`) for the reports.
 */
import { dirname, join } from "node:path";
import type { Allowlist, AllowlistEntry } from "../../src/allowlist/parse.ts";
import { createIdFactory, type IdFactory } from "../../src/core/ids.ts";
import { createIngest, type Ingest, type NormalizedMessage } from "../../src/ingest/ingest.ts";
import type { MessageRow } from "../../src/store/messages.ts";
import type { Store } from "../../src/store/store.ts";
import { type StoreMessage, silentLogger } from "./world.ts";

/**
 * gw's ingest on `store` (attachments beside its database, nothing logged), reading the time from
 * `clock`: ids are made on that clock unless `ids` is given (a seeder that also inserts rows shares one).
 */
export function seedIngest(
  store: Store,
  allowlist: Allowlist,
  clock: { now: () => number },
  o: { webhooks: boolean; ids?: IdFactory },
): Ingest {
  return createIngest({
    store,
    allowlist: () => allowlist,
    ids: o.ids ?? createIdFactory(clock),
    clock,
    webhooksEnabled: o.webhooks,
    attachmentDir: join(dirname(store.db.filename), "attachments"),
    log: silentLogger,
  });
}

/**
 * The messages row ingest stores for `m` (an inbound message's name, person and status from its
 * allowlist entry), for a seeder or a raw baseline that writes past ingest. It mirrors
 * src/ingest/ingest.ts's insertMessage on purpose; `replyTo` is the stored id it resolved.
 */
export function messageRow(
  m: NormalizedMessage,
  id: string,
  entry: Pick<AllowlistEntry, "display_name" | "person_id"> | null,
  o: { createdAt: number; replyTo?: string | null },
): MessageRow {
  const known = m.direction === "inbound" ? entry : null;
  return {
    id,
    source: m.source,
    platform_id: m.platformId,
    channel_id: m.channel.id,
    channel_type: m.channel.type,
    sender_id: m.sender.id,
    sender_name: known?.display_name ?? m.sender.displayName,
    person_id: known?.person_id ?? null,
    text: m.text,
    reply_to: o.replyTo ?? null,
    message_ts: m.timestampMs,
    direction: m.direction,
    allowlist_status: m.direction === "outbound" ? "outbound" : known ? "allowed" : "unknown",
    raw: JSON.stringify(m.raw),
    created_at: o.createdAt,
  };
}

/** A generated message (a store world's, or any with these fields) as its connector hands it to ingest. */
export function normalized(
  g: Pick<StoreMessage, "channel" | "sender" | "direction" | "messageTs" | "platformId" | "text" | "raw">,
  replyToPlatformId: string | null,
): NormalizedMessage {
  return {
    source: g.channel.source,
    platformId: g.platformId,
    channel: { id: g.channel.id, type: g.channel.type, platformRef: g.channel.platformRef },
    sender: g.sender,
    service: "iMessage",
    text: g.text,
    replyToPlatformId,
    timestampMs: g.messageTs,
    attachments: [],
    raw: g.raw,
    direction: g.direction,
  };
}

/**
 * Read marks of `agent` on `ids` at `at`, `chunk` per transaction; then its read runs, built by the
 * store's own rebuildRuns (bulk-loaded marks bypass markRead). Returns how many were marked.
 */
export function insertReadMarks(
  store: Store,
  agent: string,
  ids: Iterable<string>,
  at: number,
  chunk = 50_000,
) {
  const mark = store.db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3)",
  );
  const write = store.db.transaction((batch: string[]) => {
    for (const id of batch) mark.run(id, agent, at);
  });
  let n = 0;
  let batch: string[] = [];
  for (const id of ids) {
    batch.push(id);
    if (batch.length === chunk) {
      write.immediate(batch);
      n += batch.length;
      batch = [];
    }
  }
  write.immediate(batch);
  n += batch.length;
  mark.finalize();
  store.reads.rebuildRuns(agent);
  return n;
}

/** `SELECT <key>, count(*) AS n … GROUP BY 1` as a record (the key column named `k`). */
export function countBy(store: Store, sql: string): Record<string, number> {
  const rows = store.db.prepare<{ k: string; n: number }, []>(sql).all();
  return Object.fromEntries(rows.map((r) => [r.k, r.n]));
}
