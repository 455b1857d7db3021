/**
 * The data bench/store/store.ts times: ROWS messages over 200 channels with Zipf-like traffic (or the
 * WorldShape given: bench/channels/channels.ts seeds 10,000 channels), the first INGEST_ROWS through createIngest
 * (the normal write path, connector-sized batches split by source), the rest with store.messages.insert
 * shaped as ingest shapes rows; then (reads.ts) the read state of
 * agent-a (scattered unread), agent-c (one stale unread + the newest) and agent-d (the newest unread),
 * as raw read marks turned into read runs by the store's own rebuildRuns. Deterministic for a seed.
 */
import { dirname, join } from "node:path";
import type { AllowlistStatus, Direction } from "../../src/core/envelope.ts";
import { createIdFactory, type IdFactory } from "../../src/core/ids.ts";
import { createIngest, type NormalizedMessage } from "../../src/ingest/ingest.ts";
import type { MessageRow } from "../../src/store/messages.ts";
import type { Store } from "../../src/store/store.ts";
import { elapsed } from "../lib/settings.ts";
import { type Channel, type Person, silentLogger, storeCast, storeChannels, WORDS } from "../lib/world.ts";
import {
  CHANNELS,
  GAP_MS,
  IMESSAGE_CHANNELS,
  INGEST_BATCH,
  INGEST_ROWS,
  INSERT_CHUNK,
  pick,
  ROWS,
  randInt,
  rng,
  START_MS,
} from "./settings.ts";

const hex = (n: number): string => {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789ABCDEF"[randInt(16)];
  return s;
};

function text(): string {
  const n = 2 + randInt(24);
  const w: string[] = [];
  for (let i = 0; i < n; i++) w.push(pick(WORDS));
  return w.join(" ");
}

/**
 * The channels messages go to: how many, how many of them iMessage (the first ones), the Zipf exponent
 * of their traffic, and which of them hear only from strangers (all their messages quarantined).
 */
export interface WorldShape {
  channels: number;
  imessageChannels: number;
  zipf: number;
  strangersOnly: (channelIdx: number) => boolean;
}

/** store.ts's world: 200 channels (120 iMessage), Zipf-like s = 0.8, nobody quarantined throughout. */
export const STORE_WORLD: WorldShape = {
  channels: CHANNELS,
  imessageChannels: IMESSAGE_CHANNELS,
  zipf: 0.8,
  strangersOnly: () => false,
};

function buildWorld(shape: WorldShape) {
  const n = shape.channels;
  const channels = storeChannels(n, shape.imessageChannels);
  // Zipf-like traffic over a shuffled channel order: a few busy channels, a long tail.
  const order = channels.map((_, i) => i).sort(() => rng() - 0.5);
  const weights = new Float64Array(n);
  order.forEach((c, rank) => {
    weights[c] = 1 / (rank + 1) ** shape.zipf;
  });
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    total += weights[i] ?? 0;
    cumulative[i] = total;
  }
  const channelIndex = (): number => {
    const r = rng() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] ?? 0) < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const { known, strangers, allowlist } = storeCast({ known: 150, strangers: 400, persons: 120 });
  return { channels, channelIndex, known, strangers, allowlist, strangersOnly: shape.strangersOnly };
}

type World = ReturnType<typeof buildWorld>;

interface Generated {
  channel: Channel;
  channelIdx: number;
  sender: Person;
  direction: Direction;
  messageTs: number;
  createdAt: number;
  platformId: string;
  text: string;
  replies: boolean;
  raw: Record<string, unknown>;
}

const OWNER: Person = { id: "owner", displayName: "Me" };

/** Message i of the run (draws from the seeded stream, so call it in message order). */
function generate(world: World, i: number): Generated {
  const channelIdx = world.channelIndex();
  const channel = world.channels[channelIdx] as Channel;
  const createdAt = Math.round(START_MS + (i + 0.5) * GAP_MS);
  // Arrival lags the platform timestamp by up to two mean gaps: message_ts is not in id order.
  const messageTs = createdAt - randInt(Math.max(2, Math.round(2 * GAP_MS)));
  const r = rng();
  const quarantined = world.strangersOnly(channelIdx);
  const direction: Direction = r < 0.05 && !quarantined ? "outbound" : "inbound";
  const sender =
    direction === "outbound"
      ? OWNER
      : r < 0.85 && !quarantined
        ? pick(world.known[channel.source])
        : pick(world.strangers[channel.source]);
  const platformId =
    channel.source === "device_messenger"
      ? `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`
      : ((BigInt(createdAt - 1_420_070_400_000) << 22n) | BigInt(i & 0x3fffff)).toString();
  const raw =
    channel.source === "device_messenger"
      ? { ROWID: i + 1, service: "iMessage", is_from_me: direction === "outbound" ? 1 : 0 }
      : { guild_id: "1100000000000000000", channel_id: channel.id, type: 0 };
  return {
    channel,
    channelIdx,
    sender,
    direction,
    messageTs,
    createdAt,
    platformId,
    text: text(),
    replies: rng() < 0.05,
    raw,
  };
}

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

const statusCode: Record<AllowlistStatus, number> = { allowed: 0, unknown: 1, outbound: 2 };

/**
 * One generated batch (messages `start` to `end` of the run) as a connector hands it over, remembering
 * each message's platform id.
 */
export function ingestBatch(st: SeedState, start: number, end: number) {
  const batch: NormalizedMessage[] = [];
  const meta: Generated[] = [];
  for (let i = start; i < end; i++) {
    const g = generate(st.world, i);
    const prev = st.lastInChannel[g.channelIdx];
    st.platformIds[i] = g.platformId;
    meta.push(g);
    batch.push({
      source: g.channel.source,
      platformId: g.platformId,
      channel: { id: g.channel.id, type: g.channel.type, platformRef: g.channel.platformRef },
      sender: g.sender,
      service: "iMessage",
      text: g.text,
      replyToPlatformId: g.replies && prev !== undefined ? (st.platformIds[prev] ?? null) : null,
      timestampMs: g.messageTs,
      attachments: [],
      raw: g.raw,
      direction: g.direction,
    });
    st.lastInChannel[g.channelIdx] = i;
  }
  return { batch, meta };
}

/** 1. The first INGEST_ROWS through the normal write path (createIngest), in connector-sized batches. */
function ingestHead(store: Store, st: SeedState): void {
  const ingest = createIngest({
    store,
    allowlist: () => st.world.allowlist,
    ids: st.ids,
    clock: { now: () => st.now },
    webhooksEnabled: true,
    attachmentDir: join(dirname(store.db.filename), "attachments"),
    log: silentLogger,
  });
  for (let start = 0; start < INGEST_ROWS; start += INGEST_BATCH) {
    const end = Math.min(INGEST_ROWS, start + INGEST_BATCH);
    const { batch, meta } = ingestBatch(st, start, end);
    // A batch holds one source; split the generated batch by source, keeping order within each.
    st.now = (meta[meta.length - 1] as Generated).createdAt;
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

/** The row ingest would store for generated message `g` (status and person from allowlist.lookup). */
function rowOf(st: SeedState, g: Generated, id: string): MessageRow {
  const entry = g.direction === "inbound" ? st.world.allowlist.lookup(g.channel.source, g.sender.id) : null;
  const prev = st.lastInChannel[g.channelIdx];
  return {
    id,
    source: g.channel.source,
    platform_id: g.platformId,
    channel_id: g.channel.id,
    channel_type: g.channel.type,
    sender_id: g.sender.id,
    sender_name: entry?.display_name ?? g.sender.displayName,
    person_id: entry?.person_id ?? null,
    text: g.text,
    reply_to: g.replies && prev !== undefined ? (st.allIds[prev] ?? null) : null,
    message_ts: g.messageTs,
    direction: g.direction,
    allowlist_status: g.direction === "outbound" ? "outbound" : entry ? "allowed" : "unknown",
    raw: JSON.stringify(g.raw),
    created_at: g.createdAt,
  };
}

/**
 * 2. The rest with store.messages.insert, INSERT_CHUNK rows per transaction; channels are recorded once
 *    at the end.
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
          const row = rowOf(st, g, st.ids.message());
          store.messages.insert(row);
          st.allIds[i] = row.id;
          st.statusOf[i] = statusCode[row.allowlist_status as AllowlistStatus];
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
  const world = buildWorld(shape);
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
