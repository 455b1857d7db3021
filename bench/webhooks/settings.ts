/**
 * bench/webhooks/webhooks.ts's settings (BENCH_ variables, read once at start-up), its targets, the source and
 * secret of every delivery, its statistics (distributions left unrounded, lib/stats.ts's nearest-rank
 * percentiles; the report rounds what it shows) and the waits both phases share with the dispatcher's
 * event loop.
 */
import type { Source } from "../../src/core/envelope.ts";
import { MAX_IN_FLIGHT } from "../../src/webhooks/dispatcher.ts";
import { waitFor } from "../../test/helpers/process.ts";
import { commonEnv, flagEnv, intEnv, progressLine } from "../lib/settings.ts";
import { type Dist, dist as distOf } from "../lib/stats.ts";

export const SAMPLES = intEnv("BENCH_SAMPLES", 200, 10);
export const GAP_MS = intEnv("BENCH_GAP_MS", 20, 0);
export const MESSAGES = intEnv("BENCH_MESSAGES", 5000, 100);
export const CHANNELS = intEnv("BENCH_CHANNELS", 100, 1);
export const BATCH = intEnv("BENCH_BATCH", 100, 1);
export const { ROUNDS } = commonEnv({ ROUNDS: 3 });
export const PROFILE = flagEnv("BENCH_PROFILE", true);

export const TARGET_P50_MS = 20;
export const TARGET_RATE = 500;
export const CONCURRENCY = MAX_IN_FLIGHT;
export const LATENCY_CHANNELS = 8;
export const WARMUP = 20;
export const TIMEOUT_MS = 15_000;
export const SOURCE: Source = "device_messenger";
export const SECRET = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;

export const progress = progressLine("bench");

/** Unrounded: the report rounds what it shows. */
export const dist = (values: readonly number[]): Dist => distOf(values, (x) => x);
export type { Dist };

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `probe` every 5 ms (the dispatcher shares this event loop) until it holds. */
export const waitUntil = (probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) =>
  waitFor(async () => ((await probe()) ? true : undefined), what, timeoutMs, 5);

export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
