/**
 * Benchmark: issue 21's budgets for events (extensions.md §1), in one run: GET /events over HTTP with
 * 100,000 events stored (p99 ≤ 5 ms), next to a bare Bun.serve + bun:sqlite running the same query; and
 * the idle CPU of `gw serve` with the iMessage edit re-check on a chat.db of 100,000 rows (≤ 0.15 % of a
 * core), next to a bare Bun process.
 *
 *   bun run bench events        (or bun run bench/events/events.ts)
 *
 * 1. Seeds a real WAL database (openStore) in a temp directory through createIngest: BENCH_EVENT_MESSAGES
 *    messages, then BENCH_EVENTS edits, reactions and deletes, as the iMessage connector hands them to
 *    ingest (seed.ts).
 * 2. Serves it from two child processes, gw's app built as `gw serve` builds it (lib/gw-server.ts)
 *    and a bare Bun.serve (raw.ts), checks they answer alike and as store.events.visibleAfter
 *    does, and times sequential requests per case (no cursor, a cursor in the middle, 50 before the
 *    newest; the default limit and 100) next to the store's page in this process (http.ts).
 * 3. Starts `gw serve` on a chat.db of BENCH_CHATDB_ROWS rows with recent edited rows, and reads its CPU
 *    and a bare Bun process's from /proc over BENCH_IDLE_S of idleness (idle/idle.ts).
 * Prints a table and one JSON line (report.ts); progress goes to stderr.
 *
 * Environment: BENCH_EVENTS (100000), BENCH_EVENT_MESSAGES (20000), BENCH_REQUESTS (2000 per case and
 * target), BENCH_WARMUP (200), BENCH_QUIET_WAIT_S (10), BENCH_CHATDB_ROWS (100000; 0 skips part 3),
 * BENCH_IDLE_S (60), BENCH_IDLE_SETTLE_S (20), BENCH_KEEP (1 keeps the temp directories).
 */
import { join } from "node:path";
import { openStore } from "../../src/store/store.ts";
import { type Session, startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { measureHttp } from "./http.ts";
import { measureIdle } from "./idle.ts";
import { reportEvents } from "./report.ts";
import { seedEvents } from "./seed.ts";
import { CHATDB_ROWS, EVENTS, progress } from "./settings.ts";

async function run(session: Session): Promise<void> {
  const tTotal = performance.now();
  const dir = session.tempDir("gw-bench-events-");
  progress(`seeding ${EVENTS.toLocaleString("en-US")} events into ${join(dir, "data/gw.db")}`);
  const seeded = seedEvents(dir);
  progress(
    `  ${seeded.events} events (${seeded.visible} visible) on ${seeded.messages} messages, ${seeded.seedMs} ms`,
  );
  // From here on, a connection opened as gw serve opens one.
  const store = openStore(join(dir, "data/gw.db"));
  progress("GET /events over HTTP");
  const cases = await measureHttp(dir, store, seeded.cursors);
  store.close();
  progress("idle CPU of gw serve on a big chat.db");
  const idle = CHATDB_ROWS > 0 ? await measureIdle(session) : null;
  reportEvents({ tTotal, seeded, cases, idle });
}

const session = startSession(progress, KEEP);
try {
  await run(session);
} finally {
  session.cleanup();
}
