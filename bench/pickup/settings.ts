/**
 * bench/pickup/pickup.ts's settings (BENCH_ variables, read once at start-up: sample counts, gaps, the writer's
 * `synchronous` modes, the phases), its targets, and the seeded
 * stream the gaps between commits are drawn from.
 */
import type { SyncMode } from "../lib/chatdb.ts";
import { commonEnv, intEnv, listEnv, progressLine, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";

export const { SAMPLES, WARMUP, STEP_MS, STUCK_MS } = commonEnv({
  SAMPLES: 200,
  WARMUP: 10,
  STEP_MS: 1,
  STUCK_MS: 5000,
});
export const GAP_MIN_MS = intEnv("BENCH_GAP_MIN_MS", 50, 0);
export const GAP_MAX_MS = intEnv("BENCH_GAP_MAX_MS", 400, GAP_MIN_MS);
export const POLL_MS = intEnv("BENCH_POLL_MS", 1000, 10);
export const POLL_SAMPLES = intEnv("BENCH_POLL_SAMPLES", 120, 1);
export const POLL_WARMUP = Math.min(WARMUP, 3);
export const MODES = listEnv("BENCH_SYNC", "NORMAL,FULL", ["NORMAL", "FULL"] as SyncMode[]);
export const PHASES = new Set(listEnv("BENCH_PHASES", "notify,poll", ["notify", "poll"]));
/** The writer's mode in the poll phase (SQLite's default, and what openChatDbWriter leaves). */
export const POLL_SYNC: SyncMode = "FULL";
export const TARGET = { p50: 5, p99: 30, overMs: 50, pollSlackMs: 100 };
export const TARGET_TEXT = `p50 ≤ ${TARGET.p50} ms, p99 ≤ ${TARGET.p99} ms, 0 over ${TARGET.overMs} ms, 0 stuck`;
/** The live-push targets (issue: live-push): long poll answered and channel notification received. */
export const LIVE_TARGET = { p50: 10, p99: 40 };
export const LIVE_TARGET_TEXT = `p50 ≤ ${LIVE_TARGET.p50} ms, p99 ≤ ${LIVE_TARGET.p99} ms, 0 stuck`;

export const HERE = import.meta.dir;
export const progress = progressLine("pickup");
/** The seeded stream of the notify phase's gaps between commits (drawn in commit order). */
export const random = mulberry32(SEED);
