/**
 * bench/load/load.ts's settings (BENCH_ variables, read once at start-up), the sizes derived from them (the
 * agents' period, the seeded history, gw's per-channel rate limit), the targets of reliability.md §8.1,
 * the text prefixes the audit keys on, and the run's bearer and webhook secret.
 */
import { commonEnv, intEnv, progressLine } from "../lib/settings.ts";

export const DURATION_S = intEnv("BENCH_DURATION_S", 60, 5);
export const AGENTS = intEnv("BENCH_AGENTS", 20, 1);
export const CHANNELS = intEnv("BENCH_CHANNELS", 50, 2);
export const INBOUND_RPS = intEnv("BENCH_INBOUND_RPS", 50, 0);
export const API_RPS = intEnv("BENCH_API_RPS", 600, 1);
export const SEND_RPS = intEnv("BENCH_SEND_RPS", 10, 0);
export const WARMUP_S = Math.min(intEnv("BENCH_WARMUP_S", 10, 0), DURATION_S - 2);
export const DRAIN_S = intEnv("BENCH_DRAIN_S", 30, 1);
/** The whole run is repeated (ATTEMPTS in all, at most) while other processes used more of the CPUs. */
export const { QUIET_WAIT_S, MAX_OTHER_PCT } = commonEnv({ QUIET_WAIT_S: 60, MAX_OTHER_PCT: 15 });
export const ATTEMPTS = intEnv("BENCH_ATTEMPTS", 3, 1);
export const LIMIT = 20;
export const CONTEXT = 5;
/** Requests of a full agent loop: unread, context, mark_read. */
export const PER_LOOP = 3;
export const PERIOD_MS = (AGENTS * PER_LOOP * 1000) / API_RPS;
/** Share of the seeded history from allowlisted senders (the rest: 19% strangers, 5% the owner). */
export const ALLOWED_SHARE = 0.76;
/** Enough history that an agent reading full pages all the time (prime and drain included) never runs out. */
export const HISTORY = intEnv(
  "BENCH_HISTORY",
  Math.ceil((1.25 * LIMIT * (1000 / PERIOD_MS) * (DURATION_S + 15)) / ALLOWED_SHARE),
  0,
);
/** The per-channel limit gw runs with: at least twice the per-channel send rate (GW_ default 1/s, burst 5). */
export const RATE_PER_CHANNEL = Math.max(1, Math.ceil((2 * SEND_RPS) / CHANNELS));
export const RATE_BURST = 5;
/** reliability.md §8.1: L1 (rate, p99, errors), L2 (send p99), L5 (RSS growth, WAL, errors). */
export const TARGET = { rps: 500, p99Ms: 50, sendP99Ms: 100, rssGrowthPct: 20, walMiB: 64 };
export const IN_PREFIX = "in-";
export const OUT_PREFIX = "out-";

export const HERE = import.meta.dir;
export const progress = progressLine("load");
export const MiB = 1024 * 1024;

/** People per platform and kind: one per channel, so no two DM channels are the same chat. */
export const IM_CHANNELS = Math.ceil(CHANNELS / 2);
export const DC_CHANNELS = CHANNELS - IM_CHANNELS;
export const PEOPLE = Math.max(IM_CHANNELS, DC_CHANNELS);
export const agentNames = Array.from({ length: AGENTS }, (_, i) => `agent-${String(i).padStart(2, "0")}`);
