/**
 * Benchmark: GET /channels (extensions.md §2) at 1,000,000 messages in 10,000 channels, against the
 * issue's budget (p99 ≤ 10 ms), next to a bare Bun.serve doing the route's work and to the store's page
 * query in-process; plus what keeping the channel list in step costs ingest.
 *
 *   bun run bench channels        (or bun run bench/channels/channels.ts)
 *
 * 1. Seeds a real WAL database (openStore) in a temp directory through the paths that keep the channel
 *    list (the message store's writes, migration 5's read-marks trigger): channel names, BENCH_ROWS
 *    messages (createIngest, then store.messages.insert), read marks of three agents
 *    (store.reads.markRead), unsends (store.messages.markDeleted), renames (seed.ts, reusing
 *    store/seed.ts).
 * 2. Reopens it as gw does and checks the read model against the messages: every listed channel's
 *    unread_count equals a direct COUNT for every agent, the list is exactly the channels with a
 *    visible message, newest first (check.ts). A difference fails the run.
 * 3. Serves it from two child processes, gw's app built as `gw serve` builds it (lib/gw-server.ts)
 *    and a bare Bun.serve (raw.ts), checks they answer alike, and times sequential requests per
 *    case next to store.channelList.page in this process; then parallel connections (http.ts).
 * 4. Copies the database and ingests the same new messages into both: the original as gw opens it, the
 *    copy with the channel-list upkeep taken out of the message store's writes (upkeep.ts).
 * Prints a table, the plans and one JSON line (report.ts); progress goes to stderr.
 *
 * Environment: BENCH_ROWS (1000000), BENCH_CHANNELS (10000), BENCH_INGEST_ROWS (50000), BENCH_SEED (1),
 * BENCH_REQUESTS (2000 per case and target), BENCH_WARMUP (200), BENCH_CONNECTIONS (8: the
 * parallel run), BENCH_UPKEEP_ROWS (50000), BENCH_QUIET_WAIT_S (10: before each case, wait up to this
 * long for the machine to be under 10% busy), BENCH_KEEP (1 keeps the temp directory).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/store/store.ts";
import { type Session, startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { allowlistToml } from "../lib/world.ts";
import { ROWS } from "../store/settings.ts";
import { checkCounts, pagePlans, storeStats } from "./check.ts";
import { measureHttp } from "./http.ts";
import { reportChannels } from "./report.ts";
import { seedChannels } from "./seed.ts";
import { CHANNELS, progress } from "./settings.ts";
import { measureUpkeep } from "./upkeep.ts";

/** Seeds <dir>/data/gw.db on one connection (a 256 MiB page cache while seeding only) and closes it. */
function seed(dir: string, dbPath: string) {
  mkdirSync(join(dir, "data"), { recursive: true, mode: 0o700 });
  progress(
    `seeding ${ROWS.toLocaleString("en-US")} messages over ${CHANNELS.toLocaleString("en-US")} channels into ${dbPath}`,
  );
  const store = openStore(dbPath);
  store.db.run("PRAGMA cache_size = -262144");
  const seeded = seedChannels(store);
  store.close();
  writeFileSync(join(dir, "allowlist.toml"), allowlistToml(seeded.seeded.world.allowlist.entries));
  return seeded;
}

async function run(session: Session): Promise<void> {
  const tTotal = performance.now();
  const dir = session.tempDir("gw-bench-channels-");
  const dbPath = join(dir, "data/gw.db");
  const seeded = seed(dir, dbPath);
  // From here on, a connection opened as gw serve opens one (its 2 MiB page cache starts empty).
  const store = openStore(dbPath);
  progress("checking the channel list against the messages");
  const check = checkCounts(store);
  progress(`  ${check.listed} channels × 3 agents match (${check.ms} ms)`);
  const stats = storeStats(store);
  const plans = pagePlans(store);
  progress("GET /channels over HTTP");
  const http = await measureHttp(dir, store);
  store.close();
  progress("channel-list upkeep cost");
  const upkeep = await measureUpkeep(dbPath, seeded.seeded);
  reportChannels({ tTotal, seeded, stats, check, plans, http, upkeep });
}

const session = startSession(progress, KEEP);
try {
  await run(session);
} finally {
  session.cleanup();
}
