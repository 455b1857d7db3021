/**
 * The databases bench/api/api.ts loads and times: `rows` messages over 50 channels with Zipf-like traffic
 * (store.messages.insert, CHUNK per transaction; 3% carry an attachment record whose file the
 * retention sweeper never touches), then agent-0 … agent-9's read state, each a different layout of
 * raw read marks turned into read runs by the store's own rebuildRuns. The world (channels, people,
 * allowlist) is the same for every database of a run; each database draws from its own seeded stream.
 */
import { statSync } from "node:fs";
import type { AllowlistStatus, Direction, Source } from "../../src/core/envelope.ts";
import { createIdFactory, type IdFactory } from "../../src/core/ids.ts";
import type { MessageRow } from "../../src/store/messages.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";
import { allowlistToml, type Channel, type Person, storeCast, storeChannels, WORDS } from "../lib/world.ts";
import { CHANNELS, CHUNK, SPAN_MS, START_MS } from "./settings.ts";

/** Channels, people and the allowlist: the same for every database of a run. */
export function buildWorld() {
  const channels = storeChannels(CHANNELS, 30);
  // Zipf-like traffic (s = 0.8): a few busy channels, a long tail.
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < CHANNELS; i++) {
    total += 1 / (i + 1) ** 0.8;
    cumulative.push(total);
  }
  // Every person_id is used by several entries, so the gateway logs no single-use warnings.
  const { known, strangers, entries, allowlist } = storeCast({ known: 60, strangers: 200, persons: 30 });
  const toml = allowlistToml(entries);
  return { channels, cumulative, total, known, strangers, allowlist, toml };
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

/** Message i (draws from the stream, so call it in message order). */
function seedMessage(st: SeedState, i: number): void {
  const { store, world, rng } = st;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
  const r = rng() * world.total;
  let c = 0;
  while (c < CHANNELS - 1 && (world.cumulative[c] ?? 0) < r) c++;
  const channel = world.channels[c] as Channel;
  const createdAt = Math.round(START_MS + (i + 0.5) * st.gap);
  st.now = createdAt;
  const messageTs = createdAt - Math.floor(rng() * Math.max(2, 2 * st.gap));
  const roll = rng();
  const direction: Direction = roll < 0.05 ? "outbound" : "inbound";
  const sender: Person =
    direction === "outbound"
      ? { id: "owner", displayName: "Me" }
      : roll < 0.85
        ? pick(world.known[channel.source])
        : pick(world.strangers[channel.source]);
  const entry = direction === "inbound" ? world.allowlist.lookup(channel.source, sender.id) : null;
  const status: AllowlistStatus = direction === "outbound" ? "outbound" : entry ? "allowed" : "unknown";
  const words = 2 + Math.floor(rng() * 24);
  let text = pick(WORDS);
  for (let w = 1; w < words; w++) text += ` ${pick(WORDS)}`;
  const id = st.ids.message();
  const row: MessageRow = {
    id,
    source: channel.source,
    platform_id:
      channel.source === "device_messenger"
        ? crypto.randomUUID().toUpperCase()
        : ((BigInt(createdAt - 1_420_070_400_000) << 22n) | BigInt(i & 0x3fffff)).toString(),
    channel_id: channel.id,
    channel_type: channel.type,
    sender_id: sender.id,
    sender_name: entry?.display_name ?? sender.displayName,
    person_id: entry?.person_id ?? null,
    text,
    reply_to: rng() < 0.05 ? (st.lastInChannel[c] ?? null) : null,
    message_ts: messageTs,
    direction,
    allowlist_status: status,
    raw: JSON.stringify(
      channel.source === "device_messenger"
        ? { ROWID: i + 1, service: "iMessage", is_from_me: direction === "outbound" ? 1 : 0 }
        : { guild_id: "1100000000000000000", channel_id: channel.id, type: 0 },
    ),
    created_at: createdAt,
  };
  store.messages.insert(row);
  if (rng() < 0.03) {
    store.attachments.insert({
      id: st.ids.attachment(),
      message_id: id,
      mime: "image/jpeg",
      size_bytes: 20_000 + Math.floor(rng() * 2_000_000),
      file_name: null,
      platform_ref: `att-${i}`,
      created_at: createdAt,
    });
    st.counts.attachments++;
  }
  st.allIds[i] = id;
  st.ts[i] = messageTs;
  st.sourceOf[i] = channel.source;
  st.counts[status]++;
  if (status === "allowed") st.allowedIdx.push(i);
  st.lastInChannel[c] = id;
  if (direction === "inbound") st.lastInbound[c] = createdAt;
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
  const mark = store.db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3)",
  );
  const marks: Record<string, number> = {};
  const describe: Record<string, string> = {};
  for (const layout of layouts(st.rng, n)) {
    if (only && !only.includes(layout.agent)) continue;
    describe[layout.agent] = layout.describe;
    let k = 0;
    for (let start = 0; start < n; start += CHUNK) {
      store.db
        .transaction(() => {
          for (let p = start; p < Math.min(n, start + CHUNK); p++) {
            const i = byTs[p] as number;
            if (!layout.read(p, n, st.sourceOf[i] as Source)) continue;
            mark.run(allIds[i] as string, layout.agent, st.now + 60_000);
            k++;
          }
        })
        .immediate();
    }
    marks[layout.agent] = k;
    store.reads.rebuildRuns(layout.agent);
  }
  mark.finalize();
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
  const runs = Object.fromEntries(
    store.db
      .prepare<{ agent_id: string; n: number }, []>(
        "SELECT agent_id, count(*) AS n FROM read_runs GROUP BY 1",
      )
      .all()
      .map((r) => [r.agent_id, r.n]),
  ) as Record<string, number>;
  store.close();
  return {
    rows,
    ...st.counts,
    marks,
    runs,
    describe,
    dbBytes: statSync(path).size,
    seedMs: Math.round(performance.now() - t0),
  };
}
