/**
 * bench/channels.ts's trigger cost: what migration 5's channel-list triggers add to ingest. The seeded
 * database (closed, WAL checkpointed) is copied twice: one copy loses the three triggers (DROP TRIGGER),
 * the other keeps them but is opened with PRAGMA temp_store = MEMORY (a what-if: SQLite's statement
 * journal, which an INSERT into a table with a trigger needs, then stays in memory instead of a temp
 * file). The same TRIGGER_ROWS new messages (store-queries-seed.ts's generator, continuing the run) go
 * through the real ingest function (createIngest, webhooks off as in gw serve's default, one source per
 * batch of BATCH_ROWS = the chat.db reader's batch) into all three, in rounds of 10 batches, each round
 * starting with the next database. Only the ingest calls are timed, and the write syscalls this process
 * makes during them are counted (/proc/self/io). Each batch is one IMMEDIATE transaction with a
 * synchronous=FULL commit, as in production.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BATCH_ROWS } from "../src/connectors/device-messenger/chat-db.ts";
import { createIdFactory } from "../src/core/ids.ts";
import { createIngest, type NormalizedMessage } from "../src/ingest/ingest.ts";
import { openStore, type Store } from "../src/store/store.ts";
import { progress, TRIGGER_ROWS } from "./channels-settings.ts";
import { median } from "./lib/stats.ts";
import { silentLogger } from "./lib/world.ts";
import { ingestBatch, type SeedState } from "./store-queries-seed.ts";
import { ROWS } from "./store-queries-settings.ts";

const TRIGGERS = ["channel_list_on_insert", "channel_list_on_delete", "channel_reads_on_mark"] as const;
const ROUND = 10;

export interface Arm {
  name: string;
  ms: number;
  perS: number;
  /** write(2)-family calls this process made during the arm's ingest calls, per message (Linux). */
  writesPerMessage: number | null;
  /** Time of each round (the same 10 batches in every arm), ms. */
  roundMs: number[];
}

export interface TriggerResult {
  messages: number;
  batch: number;
  withTriggers: Arm;
  without: Arm;
  /** What-if: with the triggers, on a connection with PRAGMA temp_store = MEMORY. */
  tempStoreMemory: Arm;
  /** Messages per second with the triggers over without them, over the whole run. */
  ratio: number;
  /** The same with temp_store = MEMORY over without the triggers. */
  ratioTempStoreMemory: number;
  /** Median over the rounds of the round's ratio (less sensitive to a burst of other work). */
  roundRatio: number;
  roundRatioTempStoreMemory: number;
  /** The triggers' cost per message, µs. */
  perMessageUs: number;
  copyMs: number;
}

/** This process's write syscalls so far (/proc/self/io syscw), null off Linux. */
function writeCalls(): number | null {
  try {
    const m = /^syscw: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The next TRIGGER_ROWS generated messages as connectors hand them over: one source a batch. */
function batches(seeded: SeedState): NormalizedMessage[][] {
  const bySource: Record<string, NormalizedMessage[]> = { device_messenger: [], community_chat: [] };
  for (let start = ROWS; start < ROWS + TRIGGER_ROWS; start += BATCH_ROWS) {
    const { batch } = ingestBatch(seeded, start, Math.min(ROWS + TRIGGER_ROWS, start + BATCH_ROWS));
    for (const m of batch) bySource[m.source]?.push(m);
  }
  const out: NormalizedMessage[][] = [];
  const lists = Object.values(bySource);
  for (let i = 0; lists.some((l) => i < l.length); i += BATCH_ROWS)
    for (const l of lists) if (i < l.length) out.push(l.slice(i, i + BATCH_ROWS));
  return out;
}

/** One arm: a store at `path` with `setup` run on its connection, and createIngest timed on it. */
function arm(name: string, path: string, setup: readonly string[], seeded: SeedState) {
  const store = openStore(path);
  for (const sql of setup) store.db.run(sql);
  let now = 0;
  const ingest = createIngest({
    store,
    allowlist: () => seeded.world.allowlist,
    ids: createIdFactory({ now: () => now }),
    clock: { now: () => now },
    webhooksEnabled: false,
    attachmentDir: join(dirname(path), "attachments"),
    log: silentLogger,
  });
  let ms = 0;
  let writes: number | null = 0;
  let messages = 0;
  const roundMs: number[] = [];
  let roundStart = 0;
  return {
    store,
    startRound: () => {
      roundStart = ms;
    },
    endRound: () => {
      roundMs.push(Math.round((ms - roundStart) * 10) / 10);
    },
    run(b: NormalizedMessage[]): void {
      now = Math.max(now, ...b.map((m) => m.timestampMs)) + 1;
      const w0 = writeCalls();
      const t = Bun.nanoseconds();
      const out = ingest({ source: b[0]?.source ?? "device_messenger", messages: b, cursor: `bench-${now}` });
      ms += (Bun.nanoseconds() - t) / 1e6;
      const w1 = writeCalls();
      writes = writes === null || w0 === null || w1 === null ? null : writes + (w1 - w0);
      messages += b.length;
      if (out.some((o) => o.status !== "stored")) throw new Error("ingest did not store a generated message");
    },
    result: (): Arm => ({
      name,
      ms: Math.round(ms),
      perS: Math.round((messages / ms) * 1000),
      writesPerMessage: writes === null ? null : Math.round((writes / messages) * 10) / 10,
      roundMs,
    }),
  };
}

/** Median over rounds of `base`'s round time over `arm`'s (a throughput ratio), 3 decimals. */
const roundRatio = (arm: Arm, base: Arm): number =>
  Math.round(median(arm.roundMs.map((t, i) => (base.roundMs[i] ?? Number.NaN) / t)) * 1000) / 1000;

const triggerCount = (store: Store): number =>
  (store.db.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger'").get() as { n: number }).n;

/**
 * Measures ingest into `dbPath` (closed), a copy without the triggers and a copy with them on a
 * temp_store = MEMORY connection, round-robin (each round starts with the next arm); all stay changed.
 */
export function measureTriggers(dbPath: string, seeded: SeedState): TriggerResult {
  const tCopy = performance.now();
  const copies = ["gw-without-triggers.db", "gw-temp-store-memory.db"].map((f) => join(dirname(dbPath), f));
  for (const c of copies) copyFileSync(dbPath, c);
  const copyMs = Math.round(performance.now() - tCopy);
  const arms = [
    arm("with the triggers", dbPath, [], seeded),
    arm(
      "triggers dropped",
      copies[0] as string,
      TRIGGERS.map((t) => `DROP TRIGGER ${t}`),
      seeded,
    ),
    arm(
      "with the triggers, temp_store = MEMORY",
      copies[1] as string,
      ["PRAGMA temp_store = MEMORY"],
      seeded,
    ),
  ] as const;
  const [a, b, c] = arms;
  progress(
    `  copies ${copyMs} ms; triggers: ${triggerCount(a.store)} with, ${triggerCount(b.store)} without`,
  );
  const work = batches(seeded);
  for (let i = 0; i < work.length; i += ROUND) {
    const round = work.slice(i, i + ROUND);
    const k = (i / ROUND) % arms.length;
    for (const side of [...arms.slice(k), ...arms.slice(0, k)]) {
      side.startRound();
      for (const batch of round) side.run(batch);
      side.endRound();
    }
  }
  for (const x of arms) x.store.close();
  const [ra, rb, rc] = [a.result(), b.result(), c.result()];
  const messages = work.reduce((n, w) => n + w.length, 0);
  const r: TriggerResult = {
    messages,
    batch: BATCH_ROWS,
    withTriggers: ra,
    without: rb,
    tempStoreMemory: rc,
    ratio: Math.round((ra.perS / rb.perS) * 1000) / 1000,
    ratioTempStoreMemory: Math.round((rc.perS / rb.perS) * 1000) / 1000,
    roundRatio: roundRatio(ra, rb),
    roundRatioTempStoreMemory: roundRatio(rc, rb),
    perMessageUs: Math.round(((ra.ms - rb.ms) / messages) * 1e4) / 10,
    copyMs,
  };
  for (const x of [ra, rb, rc])
    progress(`  ${x.name}: ${x.perS} msg/s, ${x.writesPerMessage} write calls a message`);
  return r;
}
