/**
 * Benchmark: latency of the state store's hot queries at 1,000,000 stored messages (BENCH_ROWS).
 *
 *   bun run bench/store/store.ts
 *
 * Seeds a real WAL database file in a temp directory (the first BENCH_INGEST_ROWS messages through the
 * ingest pipeline, the rest with store.messages.insert in large transactions: seed.ts),
 * builds the read state of a few agents (reads.ts), reopens the store with openStore()
 * (production pragmas, empty SQLite page cache, warm OS page cache) and times the public store functions
 * against a primary-key lookup on the same file (measure.ts). Prints a table, then one
 * JSON line (report.ts). Method and figures: bench/README.md.
 *
 * Environment: BENCH_ROWS (default 1000000), BENCH_ITERS (default 2000 per query), BENCH_WARMUP
 * (default 200), BENCH_MAX_MS (default 5000: per-query time cap, after at least 10 timed runs),
 * BENCH_INGEST_ROWS (default 50000), BENCH_SEED (default 1).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../src/store/store.ts";
import { measureStore } from "./measure.ts";
import { seedAgents } from "./reads.ts";
import { reportStore } from "./report.ts";
import { seedMessages } from "./seed.ts";
import { elapsed, ROWS } from "./settings.ts";

export type Seeded = ReturnType<typeof seedStore>;

/**
 * Seeds the database at `path` on one connection (a 256 MiB page cache while seeding only), then
 * closes it (the measure reopens it as gw opens it).
 */
function seedStore(path: string) {
  const store = openStore(path);
  store.db.run("PRAGMA cache_size = -262144");
  const tSeed = performance.now();
  const s = seedMessages(store);
  process.stderr.write(`  messages: ingest ${s.ingestMs} ms, insert ${s.insertMs} ms\n`);
  const agents = seedAgents(store, s);
  const seedMs = elapsed(tSeed);
  process.stderr.write(`  read marks: ${agents.readsMs} ms\n`);
  store.close();
  return {
    channels: s.world.channels,
    allIds: s.allIds,
    messageTs: s.messageTs,
    ingestMs: s.ingestMs,
    insertMs: s.insertMs,
    ...agents,
    seedMs,
  };
}

function run(path: string): void {
  const tTotal = performance.now();
  process.stderr.write(`seeding ${ROWS.toLocaleString("en-US")} messages into ${path}\n`);
  const seeded = seedStore(path);
  const measured = measureStore(path, seeded);
  reportStore(seeded, measured, tTotal);
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

if (import.meta.main) main();
