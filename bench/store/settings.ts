/**
 * bench/store/store.ts's settings (BENCH_ variables, read once at start-up) and fixed sizes, and its
 * one seeded random stream: seeding, then the measurement's random picks, draw from it in that order,
 * so a run with the same BENCH_SEED and BENCH_ROWS stores and times the same data.
 */
import { commonEnv, intEnv, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";

export const ROWS = intEnv("BENCH_ROWS", 1_000_000, 2_000);
export const ITERS = intEnv("BENCH_ITERS", 2_000, 1);
export const { WARMUP } = commonEnv({ WARMUP: 200 });
export const MAX_MS = intEnv("BENCH_MAX_MS", 5_000, 1);
export const MIN_ITERS = Math.min(10, ITERS);
export const INGEST_ROWS = Math.min(ROWS, intEnv("BENCH_INGEST_ROWS", 50_000, 0));

export const CHANNELS = 200;
/** The first 120 channels are iMessage ones, the other 80 Discord. */
export const IMESSAGE_CHANNELS = 120;
export const LIMIT = 20;
/** Unread messages left for agent-a: one per thousand stored messages (1,000 at 1M). */
export const UNREAD_A = Math.max(LIMIT, Math.round(ROWS / 1000));
export const START_MS = Date.UTC(2024, 0, 1);
/** Two years of history whatever the row count; the mean gap between messages follows. */
export const SPAN_MS = 2 * 365 * 86_400_000;
export const GAP_MS = SPAN_MS / ROWS;
export const INSERT_CHUNK = 50_000;
export const INGEST_BATCH = 500;
export const WHAT_IF = "[cache_size 256 MiB] ";

export const rng = mulberry32(SEED);
export const randInt = (n: number): number => Math.floor(rng() * n);
export function pick<T>(items: readonly T[]): T {
  const v = items[randInt(items.length)];
  if (v === undefined) throw new Error("pick from an empty list");
  return v;
}
