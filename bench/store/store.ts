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
 * BENCH_INGEST_ROWS (default 50000), BENCH_SEED (default 1), BENCH_KEEP (1 keeps the temp dir).
 */
import { join } from "node:path";
import { startSession } from "../lib/session.ts";
import { KEEP, progressLine } from "../lib/settings.ts";
import { measureStore } from "./measure.ts";
import { reportStore } from "./report.ts";
import { seedStore } from "./seeded.ts";
import { ROWS } from "./settings.ts";

function run(path: string): void {
  const tTotal = performance.now();
  process.stderr.write(`seeding ${ROWS.toLocaleString("en-US")} messages into ${path}\n`);
  const seeded = seedStore(path);
  const measured = measureStore(path, seeded);
  reportStore(seeded, measured, tTotal);
}

const session = startSession(progressLine(""), KEEP);
try {
  run(join(session.tempDir("gw-bench-store-"), "gw.db"));
} finally {
  session.cleanup();
}
