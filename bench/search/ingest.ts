/**
 * Ingest throughput with the search index and the channel list kept in step, and without either, same
 * run: two copies of the same migrated store, one as gw opens it (withReadModels: both read models
 * written with each message) and one whose message store is the bare createMessageStore (neither: exactly
 * the ingest of the previous release, before search and the channel list), fed the same batches through
 * createIngest (split by source, webhooks on, synchronous=FULL commits, plus edits of
 * 2 % of the previous batch, one in five a delete): catch-up batches of 500 and live single messages.
 * Rounds alternate ABBA; each side's figure is the median of its rounds' messages per second.
 */
import type { NormalizedChange } from "../../src/ingest/changes.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import type { Store } from "../../src/store/store.ts";
import { seedIngest } from "../lib/seed.ts";
import {
  INGEST_BATCH,
  INGEST_LIVE,
  INGEST_ROUND,
  INGEST_ROUNDS,
  progress,
  ROWS,
  START_MS,
} from "./settings.ts";
import { generate, normalizedOf, type World, wordOf } from "./world.ts";

export type Batch = {
  source: NormalizedMessage["source"];
  messages: NormalizedMessage[];
  changes: NormalizedChange[];
};

/** A round's batches: `count` messages from index `first`, `size` per batch, plus 2 % of the batch before changed. */
export function roundBatches(world: World, first: number, count: number, size: number): Batch[] {
  const batches: Batch[] = [];
  let previous: NormalizedMessage[] = [];
  for (let start = first; start < first + count; start += size) {
    const all: NormalizedMessage[] = [];
    for (let i = start; i < Math.min(first + count, start + size); i++) {
      all.push(normalizedOf(generate(world, i), i));
    }
    const changes = (source: Batch["source"]): NormalizedChange[] => {
      const mine = previous.filter((m) => m.source === source);
      return mine.slice(0, Math.floor(mine.length / 50)).map((m, k) => {
        const base = {
          source,
          targetPlatformId: m.platformId,
          timestampMs: m.timestampMs,
          dedupeKey: `c:${m.platformId}`,
        };
        return k % 5 === 4
          ? { ...base, kind: "delete" }
          : { ...base, kind: "edit", text: `${m.text} ${wordOf(k)}` };
      });
    };
    for (const source of ["device_messenger", "community_chat"] as const) {
      const messages = all.filter((m) => m.source === source);
      if (messages.length > 0) batches.push({ source, messages, changes: changes(source) });
    }
    previous = all;
  }
  return batches;
}

export function ingestOf(store: Store, world: World) {
  let now = START_MS + 3 * 365 * 86_400_000;
  return seedIngest(store, world.allowlist, { now: () => now++ }, { webhooks: true });
}

export type Rates = { with: number[]; without: number[] };

/**
 * Each side's messages per second over `rounds` rounds of `count` messages in batches of `size`, the
 * sides alternating ABBA; message indexes continue from `first`, returned as `next`.
 */
export function ingestRounds(
  stores: { with: Store; without: Store },
  world: World,
  o: { first: number; rounds: number; count: number; size: number },
): { rates: Rates; next: number } {
  const sides = { with: ingestOf(stores.with, world), without: ingestOf(stores.without, world) };
  const rates: Rates = { with: [], without: [] };
  let next = o.first;
  for (let round = 0; round < o.rounds; round++) {
    const batches = roundBatches(world, next, o.count, o.size);
    next += o.count;
    const order = round % 2 === 0 ? (["with", "without"] as const) : (["without", "with"] as const);
    for (const side of order) {
      const t0 = performance.now();
      for (const b of batches) sides[side]({ ...b, cursor: `bench-${next}` });
      rates[side].push(Math.round((o.count / (performance.now() - t0)) * 1000));
    }
    progress(
      `  ${o.size}-message batches, round ${round + 1}: with ${rates.with.at(-1)}/s, without ${rates.without.at(-1)}/s`,
    );
  }
  return { rates, next };
}

/** Catch-up batches (INGEST_ROUNDS rounds of INGEST_ROUND), then two rounds of INGEST_LIVE single messages. */
export function ingestPhase(stores: { with: Store; without: Store }, world: World) {
  const batch = ingestRounds(stores, world, {
    first: ROWS,
    rounds: INGEST_ROUNDS,
    count: INGEST_ROUND,
    size: INGEST_BATCH,
  });
  const live = ingestRounds(stores, world, { first: batch.next, rounds: 2, count: INGEST_LIVE, size: 1 });
  return { batch: batch.rates, live: live.rates };
}
