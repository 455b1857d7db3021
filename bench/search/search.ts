/**
 * Benchmark: GET /messages/search at 1,000,000 messages in 10,000 channels, and what ingest pays for the
 * read models kept in step with it (the search index and the channel list) against the previous
 * release's ingest, which kept neither.
 *
 *   bun run bench search            (or bun run bench/search/search.ts)
 *
 * 1. Seeds ROWS messages (Zipf-distributed words, 15 % quarantined, 5 % outbound, 1 % of the allowed
 *    ones deleted) into a database at the schema before search (seed.ts, world.ts).
 * 2. Copies it and opens the copy with openStore: the search migration indexes it (timed, progress lines
 *    as gw serve logs them). A second copy of the migrated file gets the bare message store
 *    (createMessageStore: no search index and no channel list writes, the previous release's ingest).
 * 3. Ingest with the search index and the channel list vs without either, alternating rounds on the two
 *    copies (ingest.ts); the budget: ≥ 0.90× in catch-up batches of 500.
 * 4. Serves the migrated store with gw as `gw serve` builds it (lib/gw-server.ts) and times
 *    the query cases over HTTP, then the same queries in process (queries.ts). Report:
 *    report.ts. Method and figures: bench/README.md.
 *
 * Environment: BENCH_ROWS (1000000), BENCH_CHANNELS (10000), BENCH_VOCABULARY (30000), BENCH_ZIPF_S100
 * (100), BENCH_QUERIES (300 per case), BENCH_WARMUP (50), BENCH_INGEST_ROUND (10000),
 * BENCH_INGEST_ROUNDS (8), BENCH_INGEST_LIVE (500), BENCH_SEED (1), BENCH_KEEP (1 keeps the temp directory);
 * what-ifs: BENCH_FTS_AUTOMERGE (FTS5 automerge of the indexed store), BENCH_CACHE_MIB (page cache of both
 * ingest stores).
 */
import { copyFileSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/ports.ts";
import { createMessageStore } from "../../src/store/messages.ts";
import { progressLogger } from "../../src/store/migration-progress.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { startGwServer, stopServer } from "../lib/http-server.ts";
import { waitQuiet, withMachineLoad } from "../lib/machine.ts";
import { type Session, startSession } from "../lib/session.ts";
import { elapsed, KEEP } from "../lib/settings.ts";
import { allowlistToml, silentLogger, storeAllowEntries } from "../lib/world.ts";
import { ingestPhase } from "./ingest.ts";
import { buildCases, timeHttp, timeStore } from "./queries.ts";
import { reportSearch } from "./report.ts";
import { seedBase } from "./seed.ts";
import { CACHE_MIB, CHANNELS, FTS_AUTOMERGE, progress, ROWS } from "./settings.ts";
import { buildWorld } from "./world.ts";

const MiB = (bytes: number) => bytes / 2 ** 20;

function indexBytes(store: Store): number {
  const { n } = store.db
    .query(
      "SELECT sum(pgsize) AS n FROM dbstat WHERE name LIKE 'message_search%' OR name LIKE '%message_search_rows%'",
    )
    .get() as { n: number };
  return n;
}

/**
 * 2. The migrated copy (timed), opened as gw opens it, and a copy of it whose message store writes
 * neither read model (the search index, the channel list): the previous release's ingest.
 */
function migrateCopies(basePath: string, withPath: string, withoutPath: string) {
  copyFileSync(basePath, withPath);
  const log = { ...silentLogger, info: (_: object, msg?: string) => progress(`  ${msg}`) };
  const t0 = performance.now();
  const migrated = openStore(withPath, { onProgress: progressLogger(log, systemClock) });
  const migrationMs = elapsed(t0);
  const indexMiB = MiB(indexBytes(migrated));
  migrated.close();
  const dbMiB = MiB(statSync(withPath).size);
  copyFileSync(withPath, withoutPath);
  const withIndex = openStore(withPath);
  if (FTS_AUTOMERGE > 0)
    withIndex.db.run(
      `INSERT INTO message_search (message_search, rank) VALUES ('automerge', ${FTS_AUTOMERGE})`,
    );
  const plain = openStore(withoutPath);
  for (const s of CACHE_MIB > 0 ? [withIndex, plain] : [])
    s.db.run(`PRAGMA cache_size = -${CACHE_MIB * 1024}`);
  const without = { ...plain, messages: createMessageStore(plain.db) };
  return { migrationMs, indexMiB, dbMiB, withIndex, without };
}

async function run(_session: Session, dir: string): Promise<void> {
  const startedAt = performance.now();
  const world = buildWorld();
  const gwDir = join(dir, "gw");
  mkdirSync(join(gwDir, "data"), { recursive: true, mode: 0o700 });
  writeFileSync(join(gwDir, "allowlist.toml"), allowlistToml(storeAllowEntries(world.known, 120)));
  const withPath = join(gwDir, "data/gw.db");
  progress(
    `seeding ${ROWS.toLocaleString("en-US")} messages over ${CHANNELS.toLocaleString("en-US")} channels`,
  );
  const t0 = performance.now();
  const seeded = seedBase(join(dir, "base.db"), world);
  const seedMs = elapsed(t0);
  progress(`  ${seedMs} ms ${JSON.stringify(seeded.counts)}; migrating a copy`);
  const m = migrateCopies(join(dir, "base.db"), withPath, join(dir, "without.db"));
  progress(`  migration ${m.migrationMs} ms, index ${m.indexMiB.toFixed(0)} MiB; ingest rounds`);
  await waitQuiet(30, progress);
  const [ingest, ingestLoad] = await withMachineLoad(async () =>
    ingestPhase({ with: m.withIndex, without: m.without }, world),
  );
  m.withIndex.close();
  m.without.close();
  const cases = buildCases(seeded.samples);
  progress(`timing ${cases.length} query cases over HTTP`);
  const server = await startGwServer(gwDir);
  await waitQuiet(30, progress);
  const [, httpLoad] = await withMachineLoad(() => timeHttp(server.port, cases));
  await stopServer(server);
  const store = openStore(withPath);
  timeStore(store, cases);
  store.close();
  const lines = [
    `gw search benchmark: ${ROWS.toLocaleString("en-US")} messages ${JSON.stringify(seeded.counts)}, ${CHANNELS} channels`,
    `seed ${seedMs} ms; migration ${m.migrationMs} ms`,
    `ingest rounds, 500-message batches (msg/s): with the search index and the channel list ${ingest.batch.with.join(", ")}; without either (previous release) ${ingest.batch.without.join(", ")}`,
    `ingest rounds, single messages (msg/s): with the search index and the channel list ${ingest.live.with.join(", ")}; without either (previous release) ${ingest.live.without.join(", ")}`,
    `machine busy (all cores, this run included): ingest ${ingestLoad.busyPctAllCores} %, HTTP queries ${httpLoad.busyPctAllCores} %`,
  ];
  reportSearch(
    {
      startedAt,
      lines,
      migrationMs: m.migrationMs,
      indexMiB: m.indexMiB,
      dbMiB: m.dbMiB,
      ingest,
      cases,
    },
    "bun run bench search",
  );
}

if (import.meta.main) {
  const session = startSession(progress, KEEP);
  try {
    await run(session, session.tempDir("gw-bench-search-"));
  } finally {
    session.cleanup();
  }
}
