/**
 * Benchmark: latency of the state store's hot queries at 1,000,000 stored messages (BENCH_ROWS).
 *
 *   bun run bench/store-queries.ts
 *
 * Seeds a real WAL database file in a temp directory (the first BENCH_INGEST_ROWS messages through the
 * ingest pipeline, the rest with store.messages.insert in large transactions), builds the read state of
 * a few agents, reopens the store with openStore() (production pragmas, empty SQLite page cache, warm
 * OS page cache) and times the public store functions against a primary-key lookup on the same file.
 * Prints a table, then one JSON line. Method and figures: bench/README.md.
 *
 * Environment: BENCH_ROWS (default 1000000), BENCH_ITERS (default 2000 per query), BENCH_WARMUP
 * (default 200), BENCH_MAX_MS (default 5000: per-query time cap, after at least 10 timed runs),
 * BENCH_INGEST_ROWS (default 50000), BENCH_SEED (default 1).
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type AllowlistEntry, buildAllowlist } from "../src/allowlist/parse.ts";
import type { AllowlistStatus, ChannelType, Direction, Source } from "../src/core/envelope.ts";
import { createIdFactory } from "../src/core/ids.ts";
import type { Clock, Logger } from "../src/core/ports.ts";
import { createIngest, type NormalizedMessage } from "../src/ingest/ingest.ts";
import {
  CONTEXT_AFTER_SQL,
  CONTEXT_BEFORE_SQL,
  type MessageRow,
  QUARANTINE_SQL,
} from "../src/store/messages.ts";
import { type UnreadFilter, unreadCandidatesSql } from "../src/store/reads.ts";
import { openStore, type Store } from "../src/store/store.ts";
import { report, type SummaryRow } from "./lib/report.ts";
import { intEnv, mulberry32, percentile } from "./lib/stats.ts";

// ---------------------------------------------------------------------------------------------------
// Configuration

const ROWS = intEnv("BENCH_ROWS", 1_000_000, 2_000);
const ITERS = intEnv("BENCH_ITERS", 2_000, 1);
const WARMUP = intEnv("BENCH_WARMUP", 200, 0);
const MAX_MS = intEnv("BENCH_MAX_MS", 5_000, 1);
const MIN_ITERS = Math.min(10, ITERS);
const INGEST_ROWS = Math.min(ROWS, intEnv("BENCH_INGEST_ROWS", 50_000, 0));
const SEED = intEnv("BENCH_SEED", 1, 0);

const CHANNELS = 200;
const LIMIT = 20;
/** Unread messages left for agent-a: one per thousand stored messages (1,000 at 1M). */
const UNREAD_A = Math.max(LIMIT, Math.round(ROWS / 1000));
const START_MS = Date.UTC(2024, 0, 1);
/** Two years of history whatever the row count; the mean gap between messages follows. */
const SPAN_MS = 2 * 365 * 86_400_000;
const GAP_MS = SPAN_MS / ROWS;
const INSERT_CHUNK = 50_000;
const INGEST_BATCH = 500;
const WHAT_IF = "[cache_size 256 MiB] ";

// ---------------------------------------------------------------------------------------------------
// Deterministic data generation

const rng = mulberry32(SEED);
const randInt = (n: number): number => Math.floor(rng() * n);
function pick<T>(items: readonly T[]): T {
  const v = items[randInt(items.length)];
  if (v === undefined) throw new Error("pick from an empty list");
  return v;
}
const hex = (n: number): string => {
  let s = "";
  for (let i = 0; i < n; i++) s += "0123456789ABCDEF"[randInt(16)];
  return s;
};

interface Channel {
  id: string;
  source: Source;
  type: ChannelType;
  platformRef: string;
}

interface Person {
  id: string;
  displayName: string;
}

const WORDS =
  "ok yes no maybe later tonight tomorrow dinner meeting call back see you soon thanks great sounds good where are we the a on at is it running late almost there can you send me file link photo address when what why how love this lol nice".split(
    " ",
  );

function text(): string {
  const n = 2 + randInt(24);
  const w: string[] = [];
  for (let i = 0; i < n; i++) w.push(pick(WORDS));
  return w.join(" ");
}

function buildWorld() {
  const channels: Channel[] = [];
  for (let i = 0; i < CHANNELS; i++) {
    if (i < 120) {
      const group = i % 4 === 0;
      const id = group ? `chat${100_000_000 + i * 7919}` : `+1555${String(1_000_000 + i * 3571).slice(-7)}`;
      channels.push({
        id,
        source: "device_messenger",
        type: group ? "group" : "dm",
        platformRef: group ? `iMessage;+;${id}` : `iMessage;-;${id}`,
      });
    } else {
      const id = String(1_100_000_000_000_000_000n + BigInt(i) * 4_194_304_017n);
      channels.push({ id, source: "community_chat", type: i % 5 === 0 ? "dm" : "group", platformRef: id });
    }
  }
  // Zipf-like traffic (s = 0.8) over a shuffled channel order: a few busy channels, a long tail.
  const order = channels.map((_, i) => i).sort(() => rng() - 0.5);
  const weights = new Float64Array(CHANNELS);
  order.forEach((c, rank) => {
    weights[c] = 1 / (rank + 1) ** 0.8;
  });
  const cumulative = new Float64Array(CHANNELS);
  let total = 0;
  for (let i = 0; i < CHANNELS; i++) {
    total += weights[i] ?? 0;
    cumulative[i] = total;
  }
  const channelIndex = (): number => {
    const r = rng() * total;
    let lo = 0;
    let hi = CHANNELS - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] ?? 0) < r) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  const people = (source: Source, n: number, known: boolean): Person[] =>
    Array.from({ length: n }, (_, i) =>
      source === "device_messenger"
        ? {
            id: `+1666${String((known ? 2_000_000 : 5_000_000) + i * 7).slice(-7)}`,
            displayName: `Person ${i}`,
          }
        : {
            id: String(900_000_000_000_000_000n + BigInt((known ? 0 : 1_000_000) + i) * 65_537n),
            displayName: `${known ? "member" : "visitor"}${i}`,
          },
    );
  const known = {
    device_messenger: people("device_messenger", 150, true),
    community_chat: people("community_chat", 150, true),
  };
  const strangers = {
    device_messenger: people("device_messenger", 400, false),
    community_chat: people("community_chat", 400, false),
  };
  const entries: AllowlistEntry[] = (["device_messenger", "community_chat"] as const).flatMap((source) =>
    known[source].map((p, i) => ({
      source,
      id: p.id,
      person_id: `person-${i % 120}`,
      display_name: i % 3 === 0 ? null : `Friend ${i}`,
    })),
  );
  return { channels, channelIndex, known, strangers, allowlist: buildAllowlist(entries) };
}

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

// ---------------------------------------------------------------------------------------------------
// Timing

interface Result {
  name: string;
  iters: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  rows: number;
}

const results: Result[] = [];

/**
 * Runs `fn(i)` WARMUP times untimed (stopping early after MAX_MS / 4), then up to ITERS timed (stopping
 * after MAX_MS once MIN_ITERS ran). `before(i)`, when given, runs untimed ahead of each call.
 */
function measure(name: string, fn: (i: number) => number, before?: (i: number) => void): Result {
  const warmEnd = performance.now() + MAX_MS / 4;
  for (let i = 0; i < WARMUP && (i === 0 || performance.now() < warmEnd); i++) {
    before?.(i);
    fn(i);
  }
  const samples = new Float64Array(ITERS);
  let rows = 0;
  let n = 0;
  const deadline = performance.now() + MAX_MS;
  while (n < ITERS) {
    before?.(WARMUP + n);
    const t0 = Bun.nanoseconds();
    rows += fn(WARMUP + n);
    samples[n] = (Bun.nanoseconds() - t0) / 1000;
    n++;
    if (n >= MIN_ITERS && performance.now() > deadline) break;
  }
  const taken = samples.subarray(0, n).sort();
  let sum = 0;
  for (const x of taken) sum += x;
  const r: Result = {
    name,
    iters: n,
    p50: percentile(taken, 50),
    p99: percentile(taken, 99),
    mean: sum / n,
    max: taken[n - 1] ?? Number.NaN,
    rows: rows / n,
  };
  results.push(r);
  process.stderr.write(`  ${name}: p50 ${r.p50.toFixed(1)} us, p99 ${r.p99.toFixed(1)} us (${n} runs)\n`);
  return r;
}

const elapsed = (t0: number): number => Math.round(performance.now() - t0);

// ---------------------------------------------------------------------------------------------------
// Seeding

const silent: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silent,
};

function seed(store: Store) {
  const world = buildWorld();
  const { allowlist } = world;
  let now = START_MS;
  const clock: Clock = { now: () => now };
  const ids = createIdFactory(clock);

  const allIds: string[] = new Array(ROWS);
  const messageTs = new Float64Array(ROWS);
  const statusOf = new Uint8Array(ROWS); // 0 allowed, 1 unknown, 2 outbound
  const lastInChannel: (number | undefined)[] = new Array(CHANNELS);
  const platformIds: string[] = new Array(INGEST_ROWS);

  const generate = (i: number): Generated => {
    const channelIdx = world.channelIndex();
    const channel = world.channels[channelIdx] as Channel;
    const createdAt = Math.round(START_MS + (i + 0.5) * GAP_MS);
    // Arrival lags the platform timestamp by up to two mean gaps: message_ts is not in id order.
    const messageTs = createdAt - randInt(Math.max(2, Math.round(2 * GAP_MS)));
    const r = rng();
    const direction: Direction = r < 0.05 ? "outbound" : "inbound";
    const sender =
      direction === "outbound"
        ? OWNER
        : r < 0.85
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
  };

  const statusCode: Record<AllowlistStatus, number> = { allowed: 0, unknown: 1, outbound: 2 };

  // 1. The first INGEST_ROWS through the normal write path (createIngest), in connector-sized batches.
  const tIngest = performance.now();
  const ingest = createIngest({
    store,
    allowlist: () => allowlist,
    ids,
    clock,
    webhooksEnabled: true,
    attachmentDir: join(dirname(store.db.filename), "attachments"),
    log: silent,
  });
  for (let start = 0; start < INGEST_ROWS; start += INGEST_BATCH) {
    const end = Math.min(INGEST_ROWS, start + INGEST_BATCH);
    const batch: NormalizedMessage[] = [];
    const meta: Generated[] = [];
    for (let i = start; i < end; i++) {
      const g = generate(i);
      const prev = lastInChannel[g.channelIdx];
      platformIds[i] = g.platformId;
      meta.push(g);
      batch.push({
        source: g.channel.source,
        platformId: g.platformId,
        channel: { id: g.channel.id, type: g.channel.type, platformRef: g.channel.platformRef },
        sender: g.sender,
        text: g.text,
        replyToPlatformId: g.replies && prev !== undefined ? (platformIds[prev] ?? null) : null,
        timestampMs: g.messageTs,
        attachments: [],
        raw: g.raw,
        direction: g.direction,
      });
      lastInChannel[g.channelIdx] = i;
    }
    // A batch holds one source; split the generated batch by source, keeping order within each.
    now = (meta[meta.length - 1] as Generated).createdAt;
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
        allIds[j] = o.id;
        statusOf[j] = statusCode[o.allowlistStatus];
        messageTs[j] = batch[j - start]?.timestampMs ?? 0;
        i++;
      }
    }
    if (i !== end) throw new Error("ingest outcome count mismatch");
  }
  const ingestMs = elapsed(tIngest);

  // 2. The rest with store.messages.insert, INSERT_CHUNK rows per transaction. Row shaping mirrors
  //    ingest (status and person from allowlist.lookup); channels are recorded once at the end.
  const tInsert = performance.now();
  const lastInbound = new Float64Array(CHANNELS);
  for (let start = INGEST_ROWS; start < ROWS; start += INSERT_CHUNK) {
    const end = Math.min(ROWS, start + INSERT_CHUNK);
    store.db
      .transaction(() => {
        for (let i = start; i < end; i++) {
          const g = generate(i);
          now = g.createdAt;
          const id = ids.message();
          const entry = g.direction === "inbound" ? allowlist.lookup(g.channel.source, g.sender.id) : null;
          const status: AllowlistStatus =
            g.direction === "outbound" ? "outbound" : entry ? "allowed" : "unknown";
          const prev = lastInChannel[g.channelIdx];
          const row: MessageRow = {
            id,
            source: g.channel.source,
            platform_id: g.platformId,
            channel_id: g.channel.id,
            channel_type: g.channel.type,
            sender_id: g.sender.id,
            sender_name: entry?.display_name ?? g.sender.displayName,
            person_id: entry?.person_id ?? null,
            text: g.text,
            reply_to: g.replies && prev !== undefined ? (allIds[prev] ?? null) : null,
            message_ts: g.messageTs,
            direction: g.direction,
            allowlist_status: status,
            raw: JSON.stringify(g.raw),
            created_at: g.createdAt,
          };
          store.messages.insert(row);
          allIds[i] = id;
          statusOf[i] = statusCode[status];
          messageTs[i] = g.messageTs;
          lastInChannel[g.channelIdx] = i;
          if (g.direction === "inbound") lastInbound[g.channelIdx] = g.createdAt;
        }
      })
      .immediate();
  }
  store.db
    .transaction(() => {
      world.channels.forEach((c, i) => {
        const at = lastInbound[i] ?? 0;
        if (at > 0) store.channels.observeInbound({ ...c }, at);
      });
    })
    .immediate();
  const insertMs = elapsed(tInsert);
  return { world, allIds, messageTs, statusOf, ingestMs, insertMs, endMs: now };
}

/** Inserts read marks for `agent` on every allowed message except those in `unread`; then builds its read runs. */
function seedReads(
  store: Store,
  agent: string,
  allowed: Int32Array,
  allIds: readonly string[],
  unread: ReadonlySet<number>,
  at: number,
): number {
  const mark = store.db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3)",
  );
  let n = 0;
  for (let start = 0; start < allowed.length; start += INSERT_CHUNK) {
    const end = Math.min(allowed.length, start + INSERT_CHUNK);
    store.db
      .transaction(() => {
        for (let k = start; k < end; k++) {
          const i = allowed[k] as number;
          if (unread.has(i)) continue;
          mark.run(allIds[i] as string, agent, at);
          n++;
        }
      })
      .immediate();
  }
  mark.finalize();
  // Bulk-loaded marks bypass markRead, so derive the agent's read runs from them with the store's own code.
  store.reads.rebuildRuns(agent);
  return n;
}

// ---------------------------------------------------------------------------------------------------
// Main

function plan(store: Store, sql: string): string {
  const rows = store.db.prepare<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`).all();
  return rows.map((r) => r.detail).join("; ");
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return "-";
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-"));
  const path = join(dir, "gw.db");
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.on("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    run(path);
  } finally {
    cleanup();
  }
}

function run(path: string): void {
  const tTotal = performance.now();
  process.stderr.write(`seeding ${ROWS.toLocaleString("en-US")} messages into ${path}\n`);

  // ---- Seed (one connection; a larger page cache only while seeding) ----
  let store = openStore(path);
  store.db.run("PRAGMA cache_size = -262144");
  const tSeed = performance.now();
  const s = seed(store);
  const { allIds, messageTs, statusOf } = s;
  process.stderr.write(`  messages: ingest ${s.ingestMs} ms, insert ${s.insertMs} ms\n`);

  const allowedList: number[] = [];
  for (let i = 0; i < ROWS; i++) if (statusOf[i] === 0) allowedList.push(i);
  const allowed = Int32Array.from(allowedList);
  // allowed, sorted by (message_ts, id): the order unread() walks.
  const allowedByTs = Int32Array.from(allowedList).sort((a, b) => {
    const d = (messageTs[a] ?? 0) - (messageTs[b] ?? 0);
    return d !== 0 ? d : (allIds[a] as string) < (allIds[b] as string) ? -1 : 1;
  });
  const readAt = s.endMs + 60_000;

  // agent-a: everything read but UNREAD_A allowed messages spread uniformly over the history, so the
  // floor (first unread) sits near the start and each unread call has to skip the read marks between.
  const tReads = performance.now();
  const unreadA = new Set<number>();
  while (unreadA.size < Math.min(UNREAD_A, allowed.length))
    unreadA.add(allowed[randInt(allowed.length)] as number);
  const marksA = seedReads(store, "agent-a", allowed, allIds, unreadA, readAt);
  // agent-c: the pathological layout: one old message (1% into the history) left unread, then
  // everything read except the newest UNREAD_A - 1: the floor is stuck at the old one.
  const unreadC = new Set<number>([allowedByTs[Math.floor(allowedByTs.length * 0.01)] as number]);
  for (let k = allowedByTs.length - 1; unreadC.size < UNREAD_A && k >= 0; k--)
    unreadC.add(allowedByTs[k] as number);
  const marksC = seedReads(store, "agent-c", allowed, allIds, unreadC, readAt);
  // agent-d: the in-order reader: everything read except the newest UNREAD_A (the floor's good case).
  const unreadD = new Set<number>();
  for (let k = allowedByTs.length - 1; unreadD.size < UNREAD_A && k >= 0; k--)
    unreadD.add(allowedByTs[k] as number);
  const marksD = seedReads(store, "agent-d", allowed, allIds, unreadD, readAt);
  const readsMs = elapsed(tReads);
  const seedMs = elapsed(tSeed);
  process.stderr.write(`  read marks: ${readsMs} ms\n`);
  store.close();

  // ---- Measure on a fresh connection, exactly as gw opens it ----
  store = openStore(path);
  const dbBytes = statSync(path).size;
  const sqlite = (store.db.prepare("select sqlite_version() AS v").get() as { v: string }).v;
  const counts = Object.fromEntries(
    store.db
      .prepare<{ s: string; n: number }, []>(
        "SELECT allowlist_status AS s, count(*) AS n FROM messages GROUP BY 1",
      )
      .all()
      .map((r) => [r.s, r.n]),
  ) as Record<string, number>;
  const channelSizes = store.db
    .prepare<{ channel_id: string; n: number }, []>(
      "SELECT channel_id, count(*) AS n FROM messages GROUP BY channel_id ORDER BY n DESC",
    )
    .all();
  const busiest = channelSizes[0];
  if (!busiest) throw new Error("no channels seeded");
  const runs = Object.fromEntries(
    store.db
      .prepare<{ agent_id: string; n: number }, []>(
        "SELECT agent_id, count(*) AS n FROM read_runs GROUP BY 1",
      )
      .all()
      .map((r) => [r.agent_id, r.n]),
  ) as Record<string, number>;

  const plans: Record<string, string> = {
    "unread (no filter / since)": plan(store, unreadCandidatesSql("all")),
    "unread (channel)": plan(store, unreadCandidatesSql("channel")),
    "unread (source)": plan(store, unreadCandidatesSql("source")),
    "unread (source + channel)": plan(store, unreadCandidatesSql("channel", true)),
    "context before": plan(store, CONTEXT_BEFORE_SQL),
    "context after": plan(store, CONTEXT_AFTER_SQL),
    quarantine: plan(store, QUARANTINE_SQL),
  };

  const midTs = messageTs[Math.floor(ROWS / 2)] ?? 0;
  const channelIds = s.world.channels.map((c) => c.id);
  const pool = WARMUP + ITERS;
  const randomChannels = Array.from({ length: pool }, () => pick(channelIds));
  const randomIds = Array.from({ length: pool }, () => allIds[randInt(ROWS)] as string);
  const targets = Array.from({ length: pool }, () => {
    const row = store.messages.get(allIds[allowed[randInt(allowed.length)] as number] as string);
    if (!row) throw new Error("seeded message not found");
    return row;
  });
  const f = (over: Partial<UnreadFilter>): UnreadFilter => ({
    source: null,
    channelId: null,
    sinceMs: null,
    limit: LIMIT,
    ...over,
  });
  const at = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

  process.stderr.write("measuring\n");
  const tMeasure = performance.now();
  const byId = store.db.prepare<MessageRow, [string]>("SELECT * FROM messages WHERE id = ?");
  measure("PK lookup (baseline)", (i) => (byId.get(at(randomIds, i)) ? 1 : 0));
  measure("unread agent-a (all but 0.1% read)", () => store.reads.unread("agent-a", f({})).length);
  measure("unread agent-b (nothing read)", () => store.reads.unread("agent-b", f({})).length);
  measure(
    "unread agent-a, random channel",
    (i) => store.reads.unread("agent-a", f({ channelId: at(randomChannels, i) })).length,
  );
  measure(
    "unread agent-b, random channel",
    (i) => store.reads.unread("agent-b", f({ channelId: at(randomChannels, i) })).length,
  );
  measure(
    "unread agent-a, busiest channel",
    () => store.reads.unread("agent-a", f({ channelId: busiest.channel_id })).length,
  );
  measure(
    "unread agent-b, busiest channel",
    () => store.reads.unread("agent-b", f({ channelId: busiest.channel_id })).length,
  );
  measure("unread agent-a, since = mid", () => store.reads.unread("agent-a", f({ sinceMs: midTs })).length);
  measure("unread agent-b, since = mid", () => store.reads.unread("agent-b", f({ sinceMs: midTs })).length);
  measure(
    "unread agent-a, source filter",
    () => store.reads.unread("agent-a", f({ source: "community_chat" })).length,
  );
  measure("unread agent-c (1 stale unread)", () => store.reads.unread("agent-c", f({})).length);
  measure("unread agent-d (newest 0.1% unread)", () => store.reads.unread("agent-d", f({})).length);
  measure("context(target, 5, 5)", (i) => store.messages.context(at(targets, i), 5, 5).length);
  measure("quarantine(null, 20)", () => store.messages.quarantine(null, LIMIT).length);
  measure("quarantine(since = mid, 20)", () => store.messages.quarantine(midTs, LIMIT).length);
  // A consumer working through its backlog: fetch 20 unread (untimed), mark them read (timed).
  let markNow = readAt;
  let pending: string[] = [];
  measure(
    "markRead 20 ids (agent-m)",
    () => store.reads.markRead("agent-m", pending, ++markNow),
    () => {
      pending = store.reads.unread("agent-m", f({})).map((m) => m.id);
    },
  );
  // What-if, not production: the slow unread cases again with a 256 MiB page cache on this connection.
  store.db.run("PRAGMA cache_size = -262144");
  measure(`${WHAT_IF}unread agent-a`, () => store.reads.unread("agent-a", f({})).length);
  measure(
    `${WHAT_IF}unread agent-a, busiest channel`,
    () => store.reads.unread("agent-a", f({ channelId: busiest.channel_id })).length,
  );
  measure(`${WHAT_IF}unread agent-c`, () => store.reads.unread("agent-c", f({})).length);
  const measureMs = elapsed(tMeasure);
  store.close();

  // ---- Report ----
  const base = results[0] as Result;
  const header = ["query", "runs", "p50 us", "p99 us", "mean us", "max us", "rows", "p50 x PK", "p99 x PK"];
  const table = results.map((r) => [
    r.name,
    String(r.iters),
    fmt(r.p50),
    fmt(r.p99),
    fmt(r.mean),
    fmt(r.max),
    fmt(r.rows),
    fmt(r.p50 / base.p50),
    fmt(r.p99 / base.p99),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...table.map((row) => (row[c] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join("  ");

  const bun = Bun.version;
  const nproc = navigator.hardwareConcurrency;
  const cpu = cpus()[0]?.model ?? "unknown";
  const out: string[] = [];
  out.push(`gw store-queries benchmark — bun ${bun}, sqlite ${sqlite}, ${nproc} CPUs (${cpu})`);
  out.push(
    `rows ${ROWS} (allowed ${counts.allowed ?? 0}, unknown ${counts.unknown ?? 0}, outbound ${counts.outbound ?? 0}); ` +
      `${channelSizes.length} channels (busiest ${busiest.n} rows); db ${(dbBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  out.push(
    `read marks: agent-a ${marksA} (${UNREAD_A} unread, scattered), agent-c ${marksC} (1 stale + ${UNREAD_A - 1} newest unread), agent-d ${marksD} (${UNREAD_A} newest unread), agent-b none`,
  );
  out.push(`read runs: ${JSON.stringify(runs)}`);
  out.push(
    `seed ${seedMs} ms (ingest ${INGEST_ROWS} rows ${s.ingestMs} ms, insert ${ROWS - INGEST_ROWS} rows ${s.insertMs} ms, read marks ${readsMs} ms); measure ${measureMs} ms; total ${elapsed(tTotal)} ms`,
  );
  out.push("");
  out.push(line(header));
  out.push(line(widths.map((w) => "-".repeat(w))));
  for (const row of table) out.push(line(row));
  out.push("");
  out.push("plans:");
  for (const [k, v] of Object.entries(plans)) out.push(`  ${k}: ${v}`);
  const us = (r: Result) => `${fmt(r.p50)} / ${fmt(r.p99)} µs`;
  const worst = (pick: (r: Result) => boolean) =>
    results.filter(pick).reduce((a, b) => (b.p99 > a.p99 ? b : a));
  const row = (figure: string, r: Result): SummaryRow => ({
    figure: `${figure} (p50 / p99)`,
    value: `${us(r)}${figure.startsWith("worst") ? ` (${r.name})` : ""}`,
    baseline: `PK lookup ${us(base)}`,
    ratio: Math.round((r.p99 / base.p99) * 10) / 10,
    target: "",
    pass: null,
  });
  const summary: SummaryRow[] = [
    row(
      "worst unread case at 1,000,000 messages",
      worst((r) => r.name.startsWith("unread")),
    ),
    row(
      "context(target, 5, 5)",
      worst((r) => r.name.startsWith("context")),
    ),
    row(
      "worst quarantine page",
      worst((r) => r.name.startsWith("quarantine")),
    ),
    row(
      "markRead of 20 ids (a write transaction)",
      worst((r) => r.name.startsWith("markRead")),
    ),
  ];
  report({
    bench: "store",
    command: "bun run bench store",
    startedAt: tTotal,
    summary,
    lines: out,
    results: {
      rows: ROWS,
      bun,
      sqlite,
      nproc,
      cpu,
      counts,
      channels: channelSizes.length,
      busiestChannelRows: busiest.n,
      dbBytes,
      unreadA: UNREAD_A,
      marks: { "agent-a": marksA, "agent-c": marksC, "agent-d": marksD },
      runs,
      iters: ITERS,
      warmup: WARMUP,
      seedMs,
      ingestRows: INGEST_ROWS,
      ingestMs: s.ingestMs,
      insertMs: s.insertMs,
      readsMs,
      measureMs,
      totalMs: elapsed(tTotal),
      results: results.map((r) => ({
        name: r.name,
        iters: r.iters,
        p50_us: Number(r.p50.toFixed(1)),
        p99_us: Number(r.p99.toFixed(1)),
        mean_us: Number(r.mean.toFixed(1)),
        max_us: Number(r.max.toFixed(1)),
        rows: r.rows,
      })),
      plans,
    },
  });
}

main();
