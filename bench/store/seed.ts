/**
 * The data bench/store/store.ts times: ROWS messages over 200 channels with Zipf-like traffic (or the
 * WorldShape given: bench/channels/channels.ts seeds 10,000 channels), the first INGEST_ROWS through createIngest
 * (the normal write path, connector-sized batches split by source), the rest with store.messages.insert
 * shaped as ingest shapes rows; then (reads.ts) the read state of
 * agent-a (scattered unread), agent-c (one stale unread + the newest) and agent-d (the newest unread),
 * as raw read marks turned into read runs by the store's own rebuildRuns. Deterministic for a seed.
 */
import { createIdFactory, type IdFactory } from "../../src/core/ids.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import type { Store } from "../../src/store/store.ts";
import { messageRow, normalized, seedIngest } from "../lib/seed.ts";
import { elapsed } from "../lib/settings.ts";
import { type StoreMessage, storeMessage, storeWorld, type WorldShape } from "../lib/world.ts";
import {
  CHANNELS,
  GAP_MS,
  IMESSAGE_CHANNELS,
  INGEST_BATCH,
  INGEST_ROWS,
  INSERT_CHUNK,
  ROWS,
  rng,
  START_MS,
} from "./settings.ts";

/** store.ts's world: 200 channels (120 iMessage), Zipf-like s = 0.8, nobody quarantined throughout. */
export const STORE_WORLD: WorldShape = {
  channels: CHANNELS,
  imessageChannels: IMESSAGE_CHANNELS,
  zipf: 0.8,
  cast: { known: 150, strangers: 400, persons: 120 },
};

type World = ReturnType<typeof storeWorld>;

/** Message i of the run (draws from the seeded stream, so call it in message order). */
const generate = (world: World, i: number): StoreMessage =>
  storeMessage(world, i, { startMs: START_MS, gapMs: GAP_MS }, rng);

/** What seeding keeps per message (by generation index) and the clock the ids are made on. */
export interface SeedState {
  world: World;
  now: number;
  ids: IdFactory;
  allIds: string[];
  messageTs: Float64Array;
  /** 0 allowed, 1 unknown, 2 outbound. */
  statusOf: Uint8Array;
  lastInChannel: (number | undefined)[];
  platformIds: string[];
}

const statusCode = { allowed: 0, unknown: 1, outbound: 2 } as const;

/**
 * One generated batch (messages `start` to `end` of the run) as a connector hands it over, remembering
 * each message's platform id.
 */
export function ingestBatch(st: SeedState, start: number, end: number) {
  const batch: NormalizedMessage[] = [];
  const meta: StoreMessage[] = [];
  for (let i = start; i < end; i++) {
    const g = generate(st.world, i);
    const prev = st.lastInChannel[g.channelIdx];
    st.platformIds[i] = g.platformId;
    meta.push(g);
    batch.push(normalized(g, g.replies && prev !== undefined ? (st.platformIds[prev] ?? null) : null));
    st.lastInChannel[g.channelIdx] = i;
  }
  return { batch, meta };
}

/** 1. The first INGEST_ROWS through the normal write path (createIngest), in connector-sized batches. */
function ingestHead(store: Store, st: SeedState): void {
  const ingest = seedIngest(
    store,
    st.world.allowlist,
    { now: () => st.now },
    { webhooks: true, ids: st.ids },
  );
  for (let start = 0; start < INGEST_ROWS; start += INGEST_BATCH) {
    const end = Math.min(INGEST_ROWS, start + INGEST_BATCH);
    const { batch, meta } = ingestBatch(st, start, end);
    // A batch holds one source; split the generated batch by source, keeping order within each.
    st.now = (meta[meta.length - 1] as StoreMessage).createdAt;
    let i = start;
    for (const source of ["device_messenger", "community_chat"] as const) {
      const part = batch.filter((m) => m.source === source);
      if (part.length === 0) continue;
      const outcomes = ingest({ source, messages: part, cursor: `bench-${end}` });
      // Map outcomes back to generation order.
      let k = 0;
      for (let j = start; j < end; j++) {
        if (batch[j - start]?.source !== source) continue;
        const o = outcomes[k++];
        if (o?.status !== "stored") throw new Error("ingest did not store a generated message");
        st.allIds[j] = o.id;
        st.statusOf[j] = statusCode[o.allowlistStatus];
        st.messageTs[j] = batch[j - start]?.timestampMs ?? 0;
        i++;
      }
    }
    if (i !== end) throw new Error("ingest outcome count mismatch");
  }
}

/**
 * 2. The rest with store.messages.insert, INSERT_CHUNK rows per transaction, each the row ingest would
 *    store (status and person from allowlist.lookup); channels are recorded once at the end.
 */
function insertTail(store: Store, st: SeedState): void {
  const lastInbound = new Float64Array(st.world.channels.length);
  for (let start = INGEST_ROWS; start < ROWS; start += INSERT_CHUNK) {
    const end = Math.min(ROWS, start + INSERT_CHUNK);
    store.db
      .transaction(() => {
        for (let i = start; i < end; i++) {
          const g = generate(st.world, i);
          st.now = g.createdAt;
          const prev = st.lastInChannel[g.channelIdx];
          const m = normalized(g, null);
          const row = messageRow(m, st.ids.message(), st.world.allowlist.lookup(m.source, m.sender.id), {
            createdAt: g.createdAt,
            replyTo: g.replies && prev !== undefined ? (st.allIds[prev] ?? null) : null,
          });
          store.messages.insert(row);
          st.allIds[i] = row.id;
          st.statusOf[i] = statusCode[row.allowlist_status as keyof typeof statusCode];
          st.messageTs[i] = g.messageTs;
          st.lastInChannel[g.channelIdx] = i;
          if (g.direction === "inbound") lastInbound[g.channelIdx] = g.createdAt;
        }
      })
      .immediate();
  }
  store.db
    .transaction(() => {
      st.world.channels.forEach((c, i) => {
        const at = lastInbound[i] ?? 0;
        if (at > 0) store.channels.observeInbound({ ...c }, at);
      });
    })
    .immediate();
}

/** Seeds the messages (ingest, then inserts) on `store`; returns what the read state and the measure need. */
export function seedMessages(store: Store, shape: WorldShape = STORE_WORLD) {
  const world = storeWorld(shape, rng);
  const st: SeedState = {
    world,
    now: START_MS,
    ids: createIdFactory({ now: () => st.now }),
    allIds: new Array(ROWS),
    messageTs: new Float64Array(ROWS),
    statusOf: new Uint8Array(ROWS),
    lastInChannel: new Array(shape.channels),
    platformIds: new Array(INGEST_ROWS),
  };
  const tIngest = performance.now();
  ingestHead(store, st);
  const ingestMs = elapsed(tIngest);
  const tInsert = performance.now();
  insertTail(store, st);
  const insertMs = elapsed(tInsert);
  return { ...st, ingestMs, insertMs, endMs: st.now };
}
