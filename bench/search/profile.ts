/**
 * Where ingest's time goes with the read models: a diagnostic for bench/search/search.ts's ingest ratio, not a
 * benchmark of its own (no verdicts, no report file). search.ts's world and batches (500-message
 * catch-up batches split by source, 2 % of the batch before edited or deleted, webhooks on) go into four
 * copies of the same migrated store:
 *   neither   the bare message store (the previous release's ingest)
 *   index     withReadModels with the real search index, the channel list's added/removed no-ops
 *   list      withReadModels with the real channel list, the search index's writes no-ops
 *   both      withReadModels with both, as openStore builds it
 * Each store is built as createStore builds one (IMMEDIATE around the index's `deferred`), with timers
 * around the parts: the message store's own writes, the index's calls (row map, held FTS ops), the
 * channel list's calls, the held FTS writes made when the work returns, and the transaction's begin +
 * commit (synchronous=FULL, WAL checkpoints included); "other" is the rest of createIngest. Rounds go
 * round-robin; figures are medians of rounds. Then a counting pass (autocheckpoint off, the WAL
 * truncated after every batch): the WAL frames (pages) each batch writes, by table or index (dbstat
 * afterwards), and the distinct channels per batch. Prints one JSON object on stdout.
 *
 *   bun run bench/search/profile.ts        (about 1 minute on 2 cores)
 *
 * Environment: settings.ts's (BENCH_ROWS, BENCH_CHANNELS, BENCH_SEED, …), BENCH_PROFILE_ROUNDS (4
 * rounds of BENCH_INGEST_ROUND messages), BENCH_PROFILE_COUNT (5000 messages in the counting pass);
 * what-ifs for every arm: BENCH_CACHE_MIB (page cache), BENCH_PROFILE_AUTOCHECKPOINT (wal_autocheckpoint),
 * BENCH_PROFILE_DROP (indexes dropped, comma-separated).
 */

import type { Database } from "bun:sqlite";
import { copyFileSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { createChannelListStore } from "../../src/store/channel-list.ts";
import { withReadModels } from "../../src/store/message-writes.ts";
import { createMessageStore, type MessageStore } from "../../src/store/messages.ts";
import { createSearchIndex, type SearchIndex } from "../../src/store/search-index.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { startSession } from "../lib/session.ts";
import { intEnv, KEEP } from "../lib/settings.ts";
import { median } from "../lib/stats.ts";
import { type Batch, ingestOf, roundBatches } from "./ingest.ts";
import { seedBase } from "./seed.ts";
import { CACHE_MIB, INGEST_BATCH, INGEST_ROUND, progress, ROWS } from "./settings.ts";
import { buildWorld, type World } from "./world.ts";

const ROUNDS = intEnv("BENCH_PROFILE_ROUNDS", 4, 1);
const COUNT = intEnv("BENCH_PROFILE_COUNT", 5_000, 500);
/** What-ifs for every arm: the connection's page cache (MiB, 0: gw's default) and wal_autocheckpoint (pages, 0: gw's). */
const AUTOCHECKPOINT = intEnv("BENCH_PROFILE_AUTOCHECKPOINT", 0, 0);
/** What-if: indexes dropped in every copy (comma-separated names), e.g. the channel list's. */
const DROP = (process.env.BENCH_PROFILE_DROP ?? "").split(",").filter(Boolean);
const ARMS = ["neither", "index", "list", "both"] as const;
type ArmName = (typeof ARMS)[number];
const PARTS = ["messages", "indexCalls", "listCalls", "ftsApply", "beginCommit", "other"] as const;
type Part = (typeof PARTS)[number];

const now = () => Bun.nanoseconds() / 1e3;

function timed<F extends (...a: never[]) => unknown>(f: F, add: (us: number) => void): F {
  return ((...a: Parameters<F>) => {
    const t = now();
    try {
      return f(...a);
    } finally {
      add(now() - t);
    }
  }) as F;
}

/** A store built as createStore builds one, minus the read models `arm` leaves out, with part timers. */
function profiledStore(path: string, arm: ArmName) {
  const base = openStore(path);
  const db: Database = base.db;
  if (CACHE_MIB > 0) db.run(`PRAGMA cache_size = -${CACHE_MIB * 1024}`);
  if (AUTOCHECKPOINT > 0) db.run(`PRAGMA wal_autocheckpoint = ${AUTOCHECKPOINT}`);
  const us: Record<Part, number> = {
    messages: 0,
    indexCalls: 0,
    listCalls: 0,
    ftsApply: 0,
    beginCommit: 0,
    other: 0,
  };
  const add = (p: Part) => (x: number) => {
    us[p] += x;
  };
  const raw = createMessageStore(db);
  const plain: MessageStore = {
    ...raw,
    insert: timed(raw.insert, add("messages")),
    insertIfNew: timed(raw.insertIfNew, add("messages")),
    setText: timed(raw.setText, add("messages")),
    markDeleted: timed(raw.markDeleted, add("messages")),
  };
  const realIndex = createSearchIndex(db);
  const index: SearchIndex =
    arm === "index" || arm === "both"
      ? {
          ...realIndex,
          added: timed(realIndex.added, add("indexCalls")),
          edited: timed(realIndex.edited, add("indexCalls")),
          removed: timed(realIndex.removed, add("indexCalls")),
        }
      : { added: () => {}, edited: () => {}, removed: () => {}, deferred: (work) => work() };
  const realList = createChannelListStore(db);
  const channelList =
    arm === "list" || arm === "both"
      ? {
          ...realList,
          added: timed(realList.added, add("listCalls")),
          removed: timed(realList.removed, add("listCalls")),
        }
      : { ...realList, added: () => {}, removed: () => {} };
  const messages = arm === "neither" ? plain : withReadModels(plain, { index, channelList }, db);
  const store: Store = {
    ...base,
    messages,
    channelList,
    transaction<T>(work: () => T): T {
      let inner = 0;
      let deferredUs = 0;
      const t0 = now();
      const out = db
        .transaction(() => {
          const t1 = now();
          const r = index.deferred(() => {
            const t2 = now();
            const r2 = channelList.deferred(() => {
              const t3 = now();
              const r3 = work();
              inner += now() - t3;
              return r3;
            });
            us.listCalls += now() - t2 - inner;
            inner = now() - t2;
            return r2;
          });
          deferredUs = now() - t1;
          return r;
        })
        .immediate();
      us.ftsApply += deferredUs - inner;
      us.beginCommit += now() - t0 - deferredUs;
      return out;
    },
  };
  // Once every statement is prepared (the channel list's pages name their index; they never run here).
  for (const name of DROP) db.run(`DROP INDEX ${name}`);
  return { store, us };
}

/** WAL page numbers written since the WAL was last reset (frame headers), by page. */
function walPages(path: string): number[] {
  const wal = `${path}-wal`;
  const size = statSync(wal).size;
  const frame = 24 + 4096;
  const fd = openSync(wal, "r");
  const pages: number[] = [];
  const head = Buffer.alloc(24);
  for (let off = 32; off + frame <= size; off += frame) {
    readSync(fd, head, 0, 24, off);
    pages.push(head.readUInt32BE(0));
  }
  return pages;
}

function runBatch(ingest: ReturnType<typeof ingestOf>, b: Batch, i: number): void {
  ingest({ ...b, cursor: `profile-${i}` });
}

function main(): void {
  const session = startSession(progress, KEEP);
  try {
    const dir = session.tempDir("gw-bench-search-profile-");
    const world: World = buildWorld();
    progress(`seeding ${ROWS.toLocaleString("en-US")} messages`);
    seedBase(join(dir, "base.db"), world);
    const migrated = join(dir, "migrated.db");
    copyFileSync(join(dir, "base.db"), migrated);
    openStore(migrated).close();
    const paths = Object.fromEntries(ARMS.map((a) => [a, join(dir, `${a}.db`)])) as Record<ArmName, string>;
    for (const a of ARMS) copyFileSync(migrated, paths[a]);
    const arms = ARMS.map((name) => {
      const { store, us } = profiledStore(paths[name], name);
      return {
        name,
        store,
        us,
        ingest: ingestOf(store, world),
        roundUs: [] as number[],
        parts: [] as Record<Part, number>[],
      };
    });
    let next = ROWS;
    progress(`timing: ${ROUNDS} rounds of ${INGEST_ROUND} messages in ${INGEST_BATCH}-message batches`);
    const channelsPerBatch: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const batches = roundBatches(world, next, INGEST_ROUND, INGEST_BATCH);
      for (const b of batches) channelsPerBatch.push(new Set(b.messages.map((m) => m.channel.id)).size);
      next += INGEST_ROUND;
      const order = [...arms.slice(round % arms.length), ...arms.slice(0, round % arms.length)];
      for (const a of order) {
        const before = { ...a.us };
        const t0 = now();
        for (const [i, b] of batches.entries()) runBatch(a.ingest, b, next + i);
        const total = now() - t0;
        a.roundUs.push(total);
        const parts = Object.fromEntries(PARTS.map((p) => [p, a.us[p] - before[p]])) as Record<Part, number>;
        parts.other = total - PARTS.filter((p) => p !== "other").reduce((s, p) => s + parts[p], 0);
        a.parts.push(parts);
      }
      progress(
        `  round ${round + 1}: ${arms.map((a) => `${a.name} ${Math.round((INGEST_ROUND / (a.roundUs.at(-1) as number)) * 1e6)}/s`).join(", ")}`,
      );
    }
    const neither = arms[0] as (typeof arms)[number];
    const out: Record<string, unknown> = {};
    for (const a of arms) {
      const perMsg = Object.fromEntries(
        PARTS.map((p) => [p, Math.round((median(a.parts.map((x) => x[p])) / INGEST_ROUND) * 10) / 10]),
      );
      out[a.name] = {
        msgPerS: Math.round((INGEST_ROUND / median(a.roundUs)) * 1e6),
        ratioToNeither:
          Math.round(median(a.roundUs.map((t, i) => (neither.roundUs[i] as number) / t)) * 1000) / 1000,
        usPerMessage: Math.round((median(a.roundUs) / INGEST_ROUND) * 10) / 10,
        partsUsPerMessage: perMsg,
      };
    }
    // Counting pass: pages each batch writes, by table (dbstat afterwards).
    progress(`counting pages: ${COUNT} messages, the WAL truncated after every batch`);
    const batches = roundBatches(world, next, COUNT, INGEST_BATCH);
    const pageCounts: Record<string, Map<number, number>> = {};
    const distinct: Record<string, number> = {};
    for (const a of arms) {
      const counts = new Map<number, number>();
      a.store.db.run("PRAGMA wal_autocheckpoint = 0");
      a.store.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
      batches.forEach((b, i) => {
        runBatch(a.ingest, b, next + COUNT + i);
        const written = walPages(paths[a.name]);
        distinct[a.name] = (distinct[a.name] ?? 0) + new Set(written).size;
        for (const p of written) counts.set(p, (counts.get(p) ?? 0) + 1);
        a.store.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
      });
      pageCounts[a.name] = counts;
    }
    const pages: Record<string, Record<string, number>> = {};
    for (const a of arms) {
      const owner = new Map<number, string>();
      for (const r of a.store.db
        .query<{ name: string; pageno: number }, []>("SELECT name, pageno FROM dbstat")
        .all())
        owner.set(r.pageno, r.name);
      const byName: Record<string, number> = {};
      let total = 0;
      for (const [p, n] of pageCounts[a.name] as Map<number, number>) {
        const name = owner.get(p) ?? (p === 1 ? "(page 1)" : "(free or other)");
        byName[name] = (byName[name] ?? 0) + n;
        total += n;
      }
      const perBatch = (n: number) => Math.round((n / batches.length) * 10) / 10;
      pages[a.name] = Object.fromEntries([
        ["(total)", perBatch(total)] as const,
        ["(distinct)", perBatch(distinct[a.name] ?? 0)] as const,
        ...Object.entries(byName)
          .sort((x, y) => y[1] - x[1])
          .map(([k, n]) => [k, perBatch(n)] as const),
      ]);
      a.store.close();
    }
    console.log(
      JSON.stringify(
        {
          rows: ROWS,
          batch: INGEST_BATCH,
          rounds: ROUNDS,
          distinctChannelsPerBatch: median(channelsPerBatch),
          timing: out,
          pagesPerBatch: pages,
          countingBatches: batches.length,
        },
        null,
        1,
      ),
    );
  } finally {
    session.cleanup();
  }
}

main();
