/**
 * bench/discord/discord.ts's settings (BENCH_ variables, read once at start-up), its target, the catch-up bound
 * and concurrency gw runs with (the raw baseline uses the same), the run's bearer and webhook secret,
 * the seeded stream of the pauses between latency samples, and rounding.
 */
import { commonEnv, flagEnv, intEnv, listEnv, progressLine, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";

export const { SAMPLES, WARMUP, STEP_MS } = commonEnv({ SAMPLES: 500, WARMUP: 20, STEP_MS: 1 });
export const CHANNELS = intEnv("BENCH_CHANNELS", 50, 1);
export const PER_CHANNEL = intEnv("BENCH_PER_CHANNEL", 200, 1);
export const RUNS = intEnv("BENCH_CATCHUP_RUNS", 3, 1);
/** 1: the raw client also commits each message to bun:sqlite (gw's table and pragmas) after its event. */
export const RAW_STORE = flagEnv("BENCH_RAW_STORE", false);
export const PHASES = new Set(listEnv("BENCH_PHASES", "latency,catchup", ["latency", "catchup"]));
/** The target: gw's p50 (listed in unread) within this of the raw client's event p50. */
export const TARGET_GAP_MS = 5;
/** gw's default GW_COMMUNITY_CATCHUP_MAX_MESSAGES; raised only when a channel misses more. */
export const CATCHUP_BOUND = Math.max(200, PER_CHANNEL);
/** gw's CATCH_UP_CONCURRENCY (src/connectors/community-chat/tuning.ts), used by the raw baseline too. */
export const CONCURRENCY = 5;
export const AGENT = "bench-agent";
export const HERE = import.meta.dir;
/** The seeded stream of the latency phase's pauses between samples. */
export const random = mulberry32(SEED);
export const progress = progressLine("discord");
