/**
 * Benchmark: the HTTP API's hot read, `GET /messages/unread?limit=20`, against a bare Bun.serve baseline
 * doing the same work; plus how the store's unread query grows with the number of stored messages.
 *
 *   bun run bench/api/api.ts
 *
 * 1. Seeds a real WAL database (openStore) in a temp directory with BENCH_ROWS messages (default
 *    100,000) and gives agent-0 … agent-9 varied read state (bulk read marks + store.reads.rebuildRuns).
 * 2. Runs two servers from bench/api/server.ts, each in its own process and one at a time: `gateway`
 *    (createService + app.listen, as `gw serve`) and `raw` (Bun.serve + store.reads.unread + envelopeJson).
 *    Before loading them it checks that both give the same JSON for every agent.
 * 3. Loads each with wrk (BENCH_CONNECTIONS connections, BENCH_THREADS threads, X-Agent-ID rotating over
 *    the 10 agents): an untimed warm-up, then a timed run. BENCH_ROUNDS rounds, in ABBA order. Without
 *    wrk (or with BENCH_LOADGEN=bun) the load comes from bench/api/load.ts in its own process instead.
 *    Then one supplementary round with agent-0 (nothing read) only, where the store's work is small
 *    (BENCH_LIGHT=0 skips it).
 * 4. Times store.reads.unread(agent, limit 20) in-process, interleaved across databases, for three read
 *    layouts at BENCH_GROWTH_SMALL (10,000), BENCH_ROWS and BENCH_GROWTH_LARGE (1,000,000) stored
 *    messages (BENCH_GROWTH=0 skips the large one), and prints the large/small ratio.
 * Prints a table, then one JSON line; progress goes to stderr. Method and figures: bench/README.md.
 * Parts: settings.ts, seed.ts (1), servers.ts and runs.ts (2, 3), growth.ts (4),
 * report.ts; the children are server.ts and load.ts.
 *
 * Environment: BENCH_ROWS (100000), BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_DURATION_S (20),
 * BENCH_WARMUP_S (3), BENCH_ROUNDS (2), BENCH_LOADGEN (wrk|bun, default wrk when installed),
 * BENCH_LIGHT (1), BENCH_GROWTH (1), BENCH_GROWTH_SMALL (10000), BENCH_GROWTH_LARGE (1000000),
 * BENCH_GROWTH_ITERS (1000), BENCH_SEED (1), BENCH_QUIET_WAIT_S (30: before each timed run, wait up to
 * this long for the machine to be under 10% busy), BENCH_MAX_OTHER_PCT (15: a timed run during which
 * other processes used more than this share of the CPUs is repeated, twice at most), BENCH_KEEP (1 keeps
 * the temp directory, for poking at the database afterwards).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { growthPhase } from "./growth.ts";
import { reportApi } from "./report.ts";
import { loadAll } from "./runs.ts";
import { buildWorld, seedDb } from "./seed.ts";
import { checkSameAnswers } from "./servers.ts";
import { progress, ROWS } from "./settings.ts";

async function run(dir: string): Promise<void> {
  const tTotal = performance.now();
  const world = buildWorld();
  mkdirSync(join(dir, "data"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "allowlist.toml"), world.toml);
  const dbPath = join(dir, "data/gw.db");

  progress(`seeding ${ROWS.toLocaleString("en-US")} messages and 10 agents' read state into ${dbPath}`);
  const seeded = seedDb(dbPath, ROWS, world, null);
  progress(`  ${seeded.seedMs} ms, db ${(seeded.dbBytes / 2 ** 20).toFixed(0)} MiB`);

  const { baseUrl, rowsPerAgent } = await checkSameAnswers(dir);
  const { mixes, runs } = await loadAll(dir, baseUrl);
  const growth = await growthPhase(dir, dbPath, world, seeded);
  reportApi({ tTotal, dbPath, seeded, rowsPerAgent, mixes, runs, growth });
}

const session = startSession(progress, KEEP);
try {
  await run(session.tempDir("gw-bench-api-"));
} finally {
  session.cleanup();
}
