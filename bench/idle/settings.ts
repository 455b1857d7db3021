/**
 * bench/idle/idle.ts's settings (BENCH_IDLE_ variables, read once at start-up: the window, the settle period,
 * the sampling, strace, pick-ups, which gw variants run), its targets, and the run's bearer and secret.
 */
import { commonEnv, flagEnv, intEnv, progressLine } from "../lib/settings.ts";

export const { IDLE_S } = commonEnv({ IDLE_S: 60 });
export const SETTLE_S = intEnv("BENCH_IDLE_SETTLE_S", 30, 0);
export const SAMPLE_S = intEnv("BENCH_IDLE_SAMPLE_S", 10, 1);
/** How often every thread's schedstat is read, so threads that live a second or two are counted. */
export const THREAD_SAMPLE_MS = 500;
export const STRACE_S = intEnv("BENCH_IDLE_STRACE_S", 20, 0);
export const PICKUPS = intEnv("BENCH_IDLE_PICKUPS", 3, 1);
export const WEBHOOKS = flagEnv("BENCH_IDLE_WEBHOOKS", true);
export const WHATIF = flagEnv("BENCH_IDLE_WHATIF", true);
export const TARGET = { cpuPct: 0.15, rssGrowthKiB: 1024, pickupMs: 50 };

export const HERE = import.meta.dir;
export const progress = progressLine("idle");
