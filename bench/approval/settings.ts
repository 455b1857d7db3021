/**
 * bench/approval/approval.ts's settings (BENCH_ variables, read once at start-up), the run's bearer token, the
 * seeded stream of request ids and gaps, and the stderr progress line.
 */
import { commonEnv, intEnv, progressLine, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";

/** Timed samples: one permission request each (its prompt, then its verdict), plus their baselines. */
export const N = intEnv("BENCH_APPROVAL_N", 200, 1);
/** Untimed samples first (at least 4 covers both platforms and both answers). */
export const { WARMUP } = commonEnv({ WARMUP: 4 });
/** Pause between two steps, drawn in [min, max] ms: the owner never answers within the same millisecond. */
export const GAP_MIN_MS = intEnv("BENCH_GAP_MIN_MS", 100, 0);
export const GAP_MAX_MS = intEnv("BENCH_GAP_MAX_MS", 250, GAP_MIN_MS);
/** A sighting not made within this long of its start is stuck. */
export const { STUCK_MS } = commonEnv({ STUCK_MS: 10_000 });
/** Longest wait for a quiet machine (under 10 % busy over a second) before the timed samples. */
export const QUIET_S = intEnv("BENCH_QUIET_S", 60, 0);
/** The chat.db watcher's fallback timer while a prompt row is awaited (ms). */
export const WATCH_POLL_MS = 1;
/**
 * gw serve's per-channel send limit (defaults 1/s, burst 5) would throttle back-to-back prompts: the
 * bench lifts both, so every figure is the path's time and never a wait for a token.
 */
export const RATE_LIMIT_ENV = { GW_RATE_LIMIT_PER_CHANNEL_RPS: "100000", GW_RATE_LIMIT_BURST: "100000" };

export const AGENT_ID = "claude-code";
export const OWNER = "ann";
export const progress = progressLine("approval");
export const random = mulberry32(SEED);

const LETTERS = "abcdefghijkmnopqrstuvwxyz";

/** `count` distinct five-letter ids of [a-km-z] (Claude Code's request-id alphabet), seeded. */
export function requestIds(count: number): string[] {
  const ids = new Set<string>();
  while (ids.size < count)
    ids.add(Array.from({ length: 5 }, () => LETTERS[Math.floor(random() * LETTERS.length)]).join(""));
  return [...ids];
}

/** One gap, drawn from the seeded stream. */
export const gapMs = () => GAP_MIN_MS + Math.floor(random() * (GAP_MAX_MS - GAP_MIN_MS + 1));
