/**
 * The databases bench/api/api.ts loads and times: `rows` messages over 50 channels with Zipf-like traffic
 * (store.messages.insert, CHUNK per transaction; 3% carry an attachment record whose file the
 * retention sweeper never touches), then agent-0 … agent-9's read state, each a different layout of
 * raw read marks turned into read runs by the store's own rebuildRuns. The world (channels, people,
 * allowlist) is the same for every database of a run; each database draws from its own seeded stream.
 */
import { statSync } from "node:fs";
import type { Source } from "../../src/core/envelope.ts";
import { createIdFactory, type IdFactory } from "../../src/core/ids.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { countBy, insertReadMarks, messageRow, normalized } from "../lib/seed.ts";
import { elapsed, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";
import { allowlistToml, storeMessage, storeWorld } from "../lib/world.ts";
import { CHANNELS, CHUNK, SPAN_MS, START_MS } from "./settings.ts";

/** Channels, people and the allowlist: the same for every database of a run. */
export function buildWorld() {
  // Zipf-like traffic (s = 0.8), the first channels the busiest; every person_id is used by several
  // entries, so the gateway logs no single-use warnings.
  const world = storeWorld(
    {
      channels: CHANNELS,
      imessageChannels: 30,
      zipf: 0.8,
      busiestFirst: true,
      cast: { known: 60, strangers: 200, persons: 30 },
    },
    mulberry32(SEED),
  );
  return { ...world, toml: allowlistToml(world.entries) };
}

export type World = ReturnType<typeof buildWorld>;

/** Which allowed messages an agent has read, by position in (message_ts, id) order. */
interface Layout {
  agent: string;
  describe: string;
  read(pos: number, allowedCount: number, source: Source): boolean;
}

function layouts(rng: () => number, allowedCount: number): Layout[] {
  const randomSet = (k: number): Set<number> => {
    const s = new Set<number>();
    while (s.size < Math.min(k, allowedCount)) s.add(Math.floor(rng() * allowedCount));
    return s;
  };
  const scattered1000 = randomSet(1000);
  const scattered100 = randomSet(100);
  const coin50 = Uint8Array.from({ length: allowedCount }, () => (rng() < 0.5 ? 1 : 0));
  const coin90 = Uint8Array.from({ length: allowedCount }, () => (rng() < 0.9 ? 1 : 0));
  return [
    { agent: "agent-0", describe: "nothing read", read: () => false },
    { agent: "agent-1", describe: "everything read (caught up)", read: () => true },
    { agent: "agent-2", describe: "all read but the newest 1,000", read: (p, n) => p < n - 1000 },
    { agent: "agent-3", describe: "all read but 1,000 at random", read: (p) => !scattered1000.has(p) },
    { agent: "agent-4", describe: "all read but 100 at random", read: (p) => !scattered100.has(p) },
    { agent: "agent-5", describe: "50% read at random", read: (p) => coin50[p] === 1 },
    { agent: "agent-6", describe: "90% read at random", read: (p) => coin90[p] === 1 },
    {
      agent: "agent-7",
      describe: "all read but 1 stale (at 1%) + the newest 200",
      read: (p, n) => p !== Math.floor(n * 0.01) && p < n - 200,
    },
    {
      agent: "agent-8",
      describe: "community_chat read, device_messenger unread",
      read: (_p, _n, source) => source === "community_chat",
    },
    { agent: "agent-9", describe: "the oldest half read", read: (p, n) => p < n / 2 },
  ];
}

export interface Seeded {
  rows: number;
  allowed: number;
  unknown: number;
  outbound: number;
  attachments: number;
  marks: Record<string, number>;
  runs: Record<string, number>;
  describe: Record<string, string>;
  dbBytes: number;
  seedMs: number;
}

/** One database's seeding: its stream, its clock (the last arrival) and what it kept per message. */
interface SeedState {
  store: Store;
  world: World;
  rng: () => number;
  now: number;
  ids: IdFactory;
  gap: number;
  allIds: string[];
  ts: Float64Array;
  sourceOf: Source[];
  allowedIdx: number[];
  counts: { allowed: number; unknown: number; outbound: number; attachments: number };
  lastInChannel: (string | undefined)[];
  lastInbound: Float64Array;
}

/** Message i (draws from the stream, so call it in message order); 3 % carry an attachment record. */
function seedMessage(st: SeedState, i: number): void {
  const { store, world, rng } = st;
  const g = storeMessage(world, i, { startMs: START_MS, gapMs: st.gap }, rng);
  st.now = g.createdAt;
  const m = normalized(g, null);
  const row = messageRow(m, st.ids.message(), world.allowlist.lookup(m.source, m.sender.id), {
    createdAt: g.createdAt,
    replyTo: g.replies ? (st.lastInChannel[g.channelIdx] ?? null) : null,
  });
  store.messages.insert(row);
  if (rng() < 0.03) {
    store.attachments.insert({
      id: st.ids.attachment(),
      message_id: row.id,
      mime: "image/jpeg",
      size_bytes: 20_000 + Math.floor(rng() * 2_000_000),
      file_name: null,
      platform_ref: `att-${i}`,
      created_at: g.createdAt,
    });
    st.counts.attachments++;
  }
  const status = row.allowlist_status as "allowed" | "unknown" | "outbound";
  st.allIds[i] = row.id;
  st.ts[i] = g.messageTs;
  st.sourceOf[i] = g.channel.source;
  st.counts[status]++;
  if (status === "allowed") st.allowedIdx.push(i);
  st.lastInChannel[g.channelIdx] = row.id;
  if (g.direction === "inbound") st.lastInbound[g.channelIdx] = g.createdAt;
}

/** Every message, CHUNK per transaction, then each channel's last inbound arrival. */
function seedMessages(st: SeedState, rows: number): void {
  for (let start = 0; start < rows; start += CHUNK) {
    const end = Math.min(rows, start + CHUNK);
    st.store.db
      .transaction(() => {
        for (let i = start; i < end; i++) seedMessage(st, i);
      })
      .immediate();
  }
  st.store.db
    .transaction(() => {
      st.world.channels.forEach((ch, c) => {
        const at = st.lastInbound[c] ?? 0;
        if (at > 0) st.store.channels.observeInbound({ ...ch }, at);
      });
    })
    .immediate();
}

/** Read state: raw read marks, then the store's own rebuildRuns derives each agent's read runs. */
function seedReadState(st: SeedState, only: readonly string[] | null) {
  const { store, allIds, ts } = st;
  const byTs = st.allowedIdx.sort((a, b) => {
    const d = (ts[a] ?? 0) - (ts[b] ?? 0);
    return d !== 0 ? d : (allIds[a] as string) < (allIds[b] as string) ? -1 : 1;
  });
  const n = byTs.length;
  const marks: Record<string, number> = {};
  const describe: Record<string, string> = {};
  for (const layout of layouts(st.rng, n)) {
    if (only && !only.includes(layout.agent)) continue;
    describe[layout.agent] = layout.describe;
    const ids = function* () {
      for (let p = 0; p < n; p++) {
        const i = byTs[p] as number;
        if (layout.read(p, n, st.sourceOf[i] as Source)) yield allIds[i] as string;
      }
    };
    marks[layout.agent] = insertReadMarks(store, layout.agent, ids(), st.now + 60_000, CHUNK);
  }
  return { marks, describe };
}

/**
 * Seeds `path` with `rows` messages and the read state of the agents in `only` (all when null), then
 * closes the store.
 */
export function seedDb(path: string, rows: number, world: World, only: readonly string[] | null): Seeded {
  const t0 = performance.now();
  const store = openStore(path);
  store.db.run("PRAGMA cache_size = -262144");
  const st: SeedState = {
    store,
    world,
    rng: mulberry32(SEED),
    now: START_MS,
    ids: createIdFactory({ now: () => st.now }),
    gap: SPAN_MS / rows,
    allIds: new Array(rows),
    ts: new Float64Array(rows),
    sourceOf: new Array(rows),
    allowedIdx: [],
    counts: { allowed: 0, unknown: 0, outbound: 0, attachments: 0 },
    lastInChannel: new Array(CHANNELS),
    lastInbound: new Float64Array(CHANNELS),
  };
  seedMessages(st, rows);
  const { marks, describe } = seedReadState(st, only);
  const runs = countBy(store, "SELECT agent_id AS k, count(*) AS n FROM read_runs GROUP BY 1");
  store.close();
  return {
    rows,
    ...st.counts,
    marks,
    runs,
    describe,
    dbBytes: statSync(path).size,
    seedMs: elapsed(t0),
  };
}
