/**
 * bench/api/api.ts's growth figure: store.reads.unread(agent, limit 20) timed in-process with
 * Bun.nanoseconds() on databases of several sizes, each on its own openStore connection, interleaved
 * in blocks so drift in the machine's speed hits every size alike; p50/p99 by lib/stats.ts's
 * percentile. And where one agent-0 page's time goes (unread walk, attachment query, envelope JSON).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { toEnvelope } from "../../src/store/envelope.ts";
import { openStore } from "../../src/store/store.ts";
import { waitQuiet } from "../lib/machine.ts";
import { percentile } from "../lib/stats.ts";
import { type Seeded, seedDb, type World } from "./seed.ts";
import {
  AGENTS,
  GROWTH,
  GROWTH_AGENTS,
  GROWTH_ITERS,
  GROWTH_LARGE,
  GROWTH_SMALL,
  LIMIT,
  progress,
  QUIET_WAIT_S,
  ROWS,
} from "./settings.ts";

export interface Timing {
  p50: number;
  p99: number;
  mean: number;
  rows: number;
}

const BLOCKS = 10;

/**
 * Times store.reads.unread(agent, limit 20) on several databases, each on its own connection opened
 * with openStore, interleaved: BLOCKS blocks, each running every (database, agent) pair for
 * GROWTH_ITERS / BLOCKS calls, so that drift in the machine's speed hits every size alike.
 */
export function measureUnread(dbs: readonly { rows: number; path: string; agents: readonly string[] }[]) {
  const f = { source: null, channelId: null, sinceMs: null, limit: LIMIT };
  const opened = dbs.map((d) => ({ ...d, store: openStore(d.path) }));
  const samples = new Map<string, number[]>();
  const rowsSeen = new Map<string, number>();
  const per = Math.max(1, Math.round(GROWTH_ITERS / BLOCKS));
  try {
    for (const d of opened)
      for (const a of d.agents) for (let i = 0; i < per; i++) d.store.reads.unread(a, f);
    for (let b = 0; b < BLOCKS; b++) {
      const order = b % 2 === 0 ? opened : [...opened].reverse();
      for (const d of order) {
        for (const a of d.agents) {
          const key = `${d.rows}\u0000${a}`;
          const xs = samples.get(key) ?? [];
          samples.set(key, xs);
          for (let i = 0; i < per; i++) {
            const t0 = Bun.nanoseconds();
            const n = d.store.reads.unread(a, f).length;
            xs.push((Bun.nanoseconds() - t0) / 1000);
            rowsSeen.set(key, (rowsSeen.get(key) ?? 0) + n);
          }
        }
      }
    }
  } finally {
    for (const d of opened) d.store.close();
  }
  const out = new Map<number, Record<string, Timing>>();
  for (const d of dbs) {
    const timings: Record<string, Timing> = {};
    for (const a of d.agents) {
      const key = `${d.rows}\u0000${a}`;
      const xs = Float64Array.from(samples.get(key) ?? []).sort();
      timings[a] = {
        p50: percentile(xs, 50),
        p99: percentile(xs, 99),
        mean: xs.reduce((s, x) => s + x, 0) / xs.length,
        rows: (rowsSeen.get(key) ?? 0) / xs.length,
      };
    }
    out.set(d.rows, timings);
  }
  return out;
}

/**
 * Where one agent-0 page goes, in-process on its own connection (median of `iters` timed runs of each
 * step): the unread walk, the one attachment query per page the route makes, and toEnvelope plus
 * JSON.stringify of the page.
 */
export function pageBreakdown(path: string, agent: string, iters: number) {
  const store = openStore(path);
  try {
    const f = { source: null, channelId: null, sinceMs: null, limit: LIMIT };
    const rows = store.reads.unread(agent, f);
    const byId = store.attachments.forMessages(rows.map((r) => r.id));
    const atts = rows.map((r) => byId.get(r.id) ?? []);
    const median = (fn: () => unknown): number => {
      for (let i = 0; i < Math.max(10, iters / 10); i++) fn();
      const xs = new Float64Array(iters);
      for (let i = 0; i < iters; i++) {
        const t0 = Bun.nanoseconds();
        fn();
        xs[i] = (Bun.nanoseconds() - t0) / 1000;
      }
      return percentile(xs.sort(), 50);
    };
    return {
      unreadUs: median(() => store.reads.unread(agent, f)),
      attachmentsUs: median(() => store.attachments.forMessages(rows.map((r) => r.id))),
      envelopeJsonUs: median(() =>
        JSON.stringify({
          messages: rows.map((r, i) => toEnvelope(r, atts[i] ?? [], "http://127.0.0.1:1")),
          next_since: "",
        }),
      ),
    };
  } finally {
    store.close();
  }
}

/**
 * Seeds the other sizes (BENCH_GROWTH_SMALL, and BENCH_GROWTH_LARGE unless BENCH_GROWTH=0) with the
 * growth agents' read state only, waits for a quiet machine, times unread on every size and the agent-0
 * page on the main database, removes the extra databases; returns the timings and the large/small ratios.
 */
export async function growthPhase(dir: string, dbPath: string, world: World, seeded: Seeded) {
  const dbs = [{ rows: ROWS, path: dbPath, agents: AGENTS as readonly string[] }];
  const seeds: Record<number, { seedMs: number; dbBytes: number }> = {
    [ROWS]: { seedMs: seeded.seedMs, dbBytes: seeded.dbBytes },
  };
  for (const rows of [GROWTH_SMALL, ...(GROWTH ? [GROWTH_LARGE] : [])]) {
    if (rows === ROWS) continue;
    const path = join(dir, `growth-${rows}`, "gw.db");
    progress(`growth: seeding ${rows.toLocaleString("en-US")} messages`);
    const s = seedDb(path, rows, world, GROWTH_AGENTS);
    progress(`  ${s.seedMs} ms, db ${(s.dbBytes / 2 ** 20).toFixed(0)} MiB`);
    seeds[rows] = { seedMs: s.seedMs, dbBytes: s.dbBytes };
    dbs.push({ rows, path, agents: GROWTH_AGENTS });
  }
  dbs.sort((a, b) => a.rows - b.rows);
  progress(`growth: timing store.reads.unread, ${GROWTH_ITERS} calls per database and agent, interleaved`);
  await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const timings = measureUnread(dbs);
  const page = pageBreakdown(dbPath, "agent-0", GROWTH_ITERS);
  for (const d of dbs)
    if (d.rows !== ROWS) rmSync(join(dir, `growth-${d.rows}`), { recursive: true, force: true });
  const small = timings.get(GROWTH_SMALL);
  const large = GROWTH ? timings.get(GROWTH_LARGE) : undefined;
  const growthRatios: Record<string, { p50: number; p99: number } | null> = {};
  for (const a of GROWTH_AGENTS) {
    const s = small?.[a];
    const l = large?.[a];
    growthRatios[a] = s && l ? { p50: l.p50 / s.p50, p99: l.p99 / s.p99 } : null;
  }
  const atRows = timings.get(ROWS) ?? {};
  const storeMeanUs = AGENTS.reduce((sum, a) => sum + (atRows[a]?.mean ?? Number.NaN), 0) / AGENTS.length;
  return { dbs, seeds, timings, page, large, growthRatios, atRows, storeMeanUs };
}

export type Growth = Awaited<ReturnType<typeof growthPhase>>;
