/**
 * bench/store/store.ts's measurement, on a fresh connection opened exactly as gw opens one (openStore:
 * production pragmas, empty SQLite page cache): the facts of the seeded file (row counts, channel sizes,
 * read runs, query plans), then each public store query timed against a primary-key lookup, WARMUP
 * untimed runs then up to ITERS timed ones with Bun.nanoseconds(), p50/p99 by lib/stats.ts's percentile.
 */
import { statSync } from "node:fs";
import {
  CONTEXT_AFTER_SQL,
  CONTEXT_BEFORE_SQL,
  type MessageRow,
  QUARANTINE_SQL,
} from "../../src/store/messages.ts";
import { type UnreadFilter, unreadCandidatesSql } from "../../src/store/reads.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { countBy } from "../lib/seed.ts";
import { elapsed } from "../lib/settings.ts";
import { percentile } from "../lib/stats.ts";
import type { Seeded } from "./seeded.ts";
import { ITERS, LIMIT, MAX_MS, MIN_ITERS, pick, ROWS, randInt, WARMUP, WHAT_IF } from "./settings.ts";

export interface Result {
  name: string;
  iters: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
  rows: number;
}

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
  process.stderr.write(`  ${name}: p50 ${r.p50.toFixed(1)} us, p99 ${r.p99.toFixed(1)} us (${n} runs)\n`);
  return r;
}

/**
 * The plan of `sql`. The EXPLAIN statement is finalized at once: left to the garbage collector, such
 * statements made the connection's later TRUNCATE checkpoint (store.close) fail with "database table is
 * locked" since the search commit (5e24ea9), and the bench ended without a report.
 */
function plan(store: Store, sql: string): string {
  const stmt = store.db.prepare<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`);
  try {
    return stmt
      .all()
      .map((r) => r.detail)
      .join("; ");
  } finally {
    stmt.finalize();
  }
}

/** What the seeded file holds, and how SQLite plans the store's queries on it. */
function storeFacts(store: Store, path: string) {
  const dbBytes = statSync(path).size;
  const sqlite = (store.db.prepare("select sqlite_version() AS v").get() as { v: string }).v;
  const counts = countBy(store, "SELECT allowlist_status AS k, count(*) AS n FROM messages GROUP BY 1");
  const channelSizes = store.db
    .prepare<{ channel_id: string; n: number }, []>(
      "SELECT channel_id, count(*) AS n FROM messages GROUP BY channel_id ORDER BY n DESC",
    )
    .all();
  const busiest = channelSizes[0];
  if (!busiest) throw new Error("no channels seeded");
  const runs = countBy(store, "SELECT agent_id AS k, count(*) AS n FROM read_runs GROUP BY 1");
  const plans: Record<string, string> = {
    "unread (no filter / since)": plan(store, unreadCandidatesSql("all")),
    "unread (channel)": plan(store, unreadCandidatesSql("channel")),
    "unread (source)": plan(store, unreadCandidatesSql("source")),
    "unread (source + channel)": plan(store, unreadCandidatesSql("channel", true)),
    "context before": plan(store, CONTEXT_BEFORE_SQL),
    "context after": plan(store, CONTEXT_AFTER_SQL),
    quarantine: plan(store, QUARANTINE_SQL),
  };
  return { dbBytes, sqlite, counts, channelSizes, busiest, runs, plans };
}

type Facts = ReturnType<typeof storeFacts>;

const f = (over: Partial<UnreadFilter>): UnreadFilter => ({
  source: null,
  channelId: null,
  sinceMs: null,
  limit: LIMIT,
  ...over,
});
const at = <T>(xs: readonly T[], i: number): T => xs[i % xs.length] as T;

/**
 * Each query timed in turn, the PK lookup first (the baseline); the random picks are drawn before any
 * timing. Returns the results and the time the timing took.
 */
function timeQueries(store: Store, s: Seeded, busiest: Facts["busiest"]) {
  const midTs = s.messageTs[Math.floor(ROWS / 2)] ?? 0;
  const channelIds = s.channels.map((c) => c.id);
  const pool = WARMUP + ITERS;
  const randomChannels = Array.from({ length: pool }, () => pick(channelIds));
  const randomIds = Array.from({ length: pool }, () => s.allIds[randInt(ROWS)] as string);
  const targets = Array.from({ length: pool }, () => {
    const row = store.messages.get(s.allIds[s.allowed[randInt(s.allowed.length)] as number] as string);
    if (!row) throw new Error("seeded message not found");
    return row;
  });
  process.stderr.write("measuring\n");
  const tMeasure = performance.now();
  const byId = store.db.prepare<MessageRow, [string]>("SELECT * FROM messages WHERE id = ?");
  const results: Result[] = [
    measure("PK lookup (baseline)", (i) => (byId.get(at(randomIds, i)) ? 1 : 0)),
    measure("unread agent-a (all but 0.1% read)", () => store.reads.unread("agent-a", f({})).length),
    measure("unread agent-b (nothing read)", () => store.reads.unread("agent-b", f({})).length),
    measure(
      "unread agent-a, random channel",
      (i) => store.reads.unread("agent-a", f({ channelId: at(randomChannels, i) })).length,
    ),
    measure(
      "unread agent-b, random channel",
      (i) => store.reads.unread("agent-b", f({ channelId: at(randomChannels, i) })).length,
    ),
    measure(
      "unread agent-a, busiest channel",
      () => store.reads.unread("agent-a", f({ channelId: busiest.channel_id })).length,
    ),
    measure(
      "unread agent-b, busiest channel",
      () => store.reads.unread("agent-b", f({ channelId: busiest.channel_id })).length,
    ),
    measure("unread agent-a, since = mid", () => store.reads.unread("agent-a", f({ sinceMs: midTs })).length),
    measure("unread agent-b, since = mid", () => store.reads.unread("agent-b", f({ sinceMs: midTs })).length),
    measure(
      "unread agent-a, source filter",
      () => store.reads.unread("agent-a", f({ source: "community_chat" })).length,
    ),
    measure("unread agent-c (1 stale unread)", () => store.reads.unread("agent-c", f({})).length),
    measure("unread agent-d (newest 0.1% unread)", () => store.reads.unread("agent-d", f({})).length),
    measure("context(target, 5, 5)", (i) => store.messages.context(at(targets, i), 5, 5).length),
    measure("quarantine(null, 20)", () => store.messages.quarantine(null, LIMIT).length),
    measure("quarantine(since = mid, 20)", () => store.messages.quarantine(midTs, LIMIT).length),
  ];
  // A consumer working through its backlog: fetch 20 unread (untimed), mark them read (timed).
  let markNow = s.readAt;
  let pending: string[] = [];
  results.push(
    measure(
      "markRead 20 ids (agent-m)",
      () => store.reads.markRead("agent-m", pending, ++markNow),
      () => {
        pending = store.reads.unread("agent-m", f({})).map((m) => m.id);
      },
    ),
  );
  // What-if, not production: the slow unread cases again with a 256 MiB page cache on this connection.
  store.db.run("PRAGMA cache_size = -262144");
  results.push(
    measure(`${WHAT_IF}unread agent-a`, () => store.reads.unread("agent-a", f({})).length),
    measure(
      `${WHAT_IF}unread agent-a, busiest channel`,
      () => store.reads.unread("agent-a", f({ channelId: busiest.channel_id })).length,
    ),
    measure(`${WHAT_IF}unread agent-c`, () => store.reads.unread("agent-c", f({})).length),
  );
  return { results, measureMs: elapsed(tMeasure) };
}

export type Measured = Facts & { results: Result[]; measureMs: number };

/** Opens the seeded file as gw does, reads its facts, times the queries, closes it. */
export function measureStore(path: string, s: Seeded): Measured {
  const store = openStore(path);
  try {
    const facts = storeFacts(store, path);
    return { ...facts, ...timeQueries(store, s, facts.busiest) };
  } finally {
    store.close();
  }
}
