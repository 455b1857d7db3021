/**
 * bench/channels/channels.ts's upkeep cost: what keeping the channel list in step costs ingest. The channel list is
 * written by the message store's writes (src/store/message-writes.ts, `withReadModels`), so the cost is
 * measured by taking exactly that part away. The seeded database (closed, WAL checkpointed) is copied
 * once, and both files get the same UPKEEP_ROWS new messages (store/seed.ts's generator,
 * continuing the run) through the real ingest function (createIngest, webhooks off as in gw serve's
 * default, one source per batch of BATCH_ROWS = the chat.db reader's batch):
 *   (a) the store as gw opens it (openStore);
 *   (b) the same store, whose `messages` is withReadModels(createMessageStore(db), { index: the real search
 *       index, channelList: the real channel list with added/removed made no-ops }, db), and whose
 *       `transaction` holds that index's FTS writes as openStore's does (the index is private to
 *       createStore, so the arm builds its own and wires both to it): the same work minus the
 *       channel-list upkeep.
 * Rounds of ROUND batches, alternating which store goes first (ABBA). Only the ingest calls are timed,
 * and the write syscalls this process makes during them are counted (/proc/self/io). Each batch is one
 * IMMEDIATE transaction with a synchronous=FULL commit, as in production. Afterwards both files must
 * hold the same new messages and search rows, and only (a)'s channel list must have moved.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { BATCH_ROWS } from "../../src/connectors/device-messenger/chat-db.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { createChannelListStore } from "../../src/store/channel-list.ts";
import { withReadModels } from "../../src/store/message-writes.ts";
import { createMessageStore } from "../../src/store/messages.ts";
import { createSearchIndex } from "../../src/store/search-index.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { type MachineLoad, waitQuiet, withMachineLoad } from "../lib/machine.ts";
import { seedIngest } from "../lib/seed.ts";
import { median } from "../lib/stats.ts";
import { ingestBatch, type SeedState } from "../store/seed.ts";
import { ROWS } from "../store/settings.ts";
import { progress, UPKEEP_ROWS } from "./settings.ts";

const ROUND = 10;

export interface Arm {
  name: string;
  ms: number;
  perS: number;
  /** write(2)-family calls this process made during the arm's ingest calls, per message (Linux). */
  writesPerMessage: number | null;
  /** Time of each round (the same ROUND batches in both arms), ms. */
  roundMs: number[];
}

/** What each file holds after the run, counted against before it. */
export interface UpkeepCheck {
  messagesAdded: number;
  searchRowsAdded: number;
  /** Change of sum(allowed_count) over channel_list. */
  listAllowedAdded: number;
  /** Change of max(last_visible_at) over channel_list. */
  listNewestMoved: boolean;
}

export interface UpkeepResult {
  messages: number;
  batch: number;
  /** (a) openStore: the search index and the channel list kept in step. */
  withList: Arm;
  /** (b) the same store with channelList.added/removed made no-ops. */
  withoutList: Arm;
  /** Messages per second of (a) over (b), over the whole run. */
  ratio: number;
  /** Median over the rounds of the round's ratio (less sensitive to a burst of other work). */
  roundRatio: number;
  /** The channel-list upkeep's cost per message, µs (whole-run time difference / messages). */
  perMessageUs: number;
  copyMs: number;
  check: { withList: UpkeepCheck; withoutList: UpkeepCheck };
  load: MachineLoad;
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

/** The next UPKEEP_ROWS generated messages as connectors hand them over: one source a batch. */
function batches(seeded: SeedState): NormalizedMessage[][] {
  const bySource: Record<string, NormalizedMessage[]> = { device_messenger: [], community_chat: [] };
  for (let start = ROWS; start < ROWS + UPKEEP_ROWS; start += BATCH_ROWS) {
    const { batch } = ingestBatch(seeded, start, Math.min(ROWS + UPKEEP_ROWS, start + BATCH_ROWS));
    for (const m of batch) bySource[m.source]?.push(m);
  }
  const out: NormalizedMessage[][] = [];
  const lists = Object.values(bySource);
  for (let i = 0; lists.some((l) => i < l.length); i += BATCH_ROWS)
    for (const l of lists) if (i < l.length) out.push(l.slice(i, i + BATCH_ROWS));
  return out;
}

/**
 * openStore(path) with the channel-list upkeep taken out of the message store's writes: everything
 * else (the message store, the real search index and its held FTS writes, the channel list's other
 * methods) as openStore builds it.
 */
export function storeWithoutListUpkeep(path: string): Store {
  const store = openStore(path);
  const { db } = store;
  const index = createSearchIndex(db);
  const channelList = {
    ...createChannelListStore(db),
    added: () => {},
    removed: () => {},
    deferred: <T>(work: () => T): T => work(),
  };
  return {
    ...store,
    messages: withReadModels(createMessageStore(db), { index, channelList }, db),
    transaction: <T>(work: () => T): T => db.transaction(() => index.deferred(work)).immediate(),
  };
}

type Counts = { messages: number; searchRows: number; allowed: number; newest: number | null };

const counts = (store: Store): Counts =>
  store.db
    .query<Counts, []>(
      `SELECT (SELECT count(*) FROM messages) AS messages,
        (SELECT count(*) FROM message_search_rows) AS searchRows,
        (SELECT coalesce(sum(allowed_count), 0) FROM channel_list) AS allowed,
        (SELECT max(last_visible_at) FROM channel_list) AS newest`,
    )
    .get() as Counts;

/** One arm: createIngest on `store`, timed per batch and per round. */
function arm(name: string, store: Store, seeded: SeedState) {
  const before = counts(store);
  let now = 0;
  const ingest = seedIngest(store, seeded.world.allowlist, { now: () => now }, { webhooks: false });
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
    check(): UpkeepCheck {
      const after = counts(store);
      return {
        messagesAdded: after.messages - before.messages,
        searchRowsAdded: after.searchRows - before.searchRows,
        listAllowedAdded: after.allowed - before.allowed,
        listNewestMoved: after.newest !== before.newest,
      };
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

/**
 * Measures ingest into `dbPath` (closed) as gw opens it and into a copy without the channel-list
 * upkeep, rounds alternating ABBA; both stay changed.
 */
export async function measureUpkeep(dbPath: string, seeded: SeedState): Promise<UpkeepResult> {
  const tCopy = performance.now();
  const copy = join(dirname(dbPath), "gw-without-list-upkeep.db");
  copyFileSync(dbPath, copy);
  const copyMs = Math.round(performance.now() - tCopy);
  const a = arm("openStore (search index + channel list)", openStore(dbPath), seeded);
  const b = arm("channel-list upkeep taken out", storeWithoutListUpkeep(copy), seeded);
  const arms = [a, b] as const;
  const work = batches(seeded);
  progress(`  copy ${copyMs} ms; ${work.length} batches in rounds of ${ROUND}`);
  await waitQuiet(30, (s) => progress(`  ${s}`));
  const [, load] = await withMachineLoad(async () => {
    for (let i = 0; i < work.length; i += ROUND) {
      const round = work.slice(i, i + ROUND);
      for (const side of (i / ROUND) % 2 === 0 ? arms : ([b, a] as const)) {
        side.startRound();
        for (const batch of round) side.run(batch);
        side.endRound();
      }
    }
  });
  const check = { withList: a.check(), withoutList: b.check() };
  for (const x of arms) x.store.close();
  const [ra, rb] = [a.result(), b.result()];
  const messages = work.reduce((n, w) => n + w.length, 0);
  const { withList: ca, withoutList: cb } = check;
  if (
    ca.messagesAdded !== messages ||
    cb.messagesAdded !== messages ||
    ca.searchRowsAdded !== cb.searchRowsAdded ||
    ca.listAllowedAdded <= 0 ||
    cb.listAllowedAdded !== 0 ||
    cb.listNewestMoved
  )
    throw new Error(`upkeep arms did different work: ${JSON.stringify(check)}`);
  const r: UpkeepResult = {
    messages,
    batch: BATCH_ROWS,
    withList: ra,
    withoutList: rb,
    ratio: Math.round((ra.perS / rb.perS) * 1000) / 1000,
    roundRatio: roundRatio(ra, rb),
    perMessageUs: Math.round(((ra.ms - rb.ms) / messages) * 1e4) / 10,
    copyMs,
    check,
    load,
  };
  for (const x of [ra, rb])
    progress(`  ${x.name}: ${x.perS} msg/s, ${x.writesPerMessage} write calls a message`);
  return r;
}
