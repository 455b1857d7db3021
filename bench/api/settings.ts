/**
 * bench/api/api.ts's settings (BENCH_ variables, read once at start-up), the request every run makes (GET
 * /messages/unread?limit=20 with this run's bearer), the agents, and the number formatting its lines
 * share. The load generator is wrk when it is on PATH, else bench/api/load.ts (BENCH_LOADGEN decides).
 */
import { commonEnv, flagEnv, intEnv, progressLine } from "../lib/settings.ts";

export const ROWS = intEnv("BENCH_ROWS", 100_000, 5_000);
export const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 32, 1);
export const THREADS = Math.min(CONNECTIONS, intEnv("BENCH_THREADS", 2, 1));
export const DURATION_S = intEnv("BENCH_DURATION_S", 20, 1);
export const WARMUP_S = intEnv("BENCH_WARMUP_S", 3, 0);
export const GROWTH = flagEnv("BENCH_GROWTH", true);
/** A second, supplementary mix: agent-0 (nothing read) only, one round. */
export const LIGHT = flagEnv("BENCH_LIGHT", true);
export const GROWTH_SMALL = intEnv("BENCH_GROWTH_SMALL", 10_000, 5_000);
export const GROWTH_LARGE = intEnv("BENCH_GROWTH_LARGE", 1_000_000, 5_000);
export const GROWTH_ITERS = intEnv("BENCH_GROWTH_ITERS", 1_000, 10);
/** Rounds of each mix; a timed run during which other processes used more than MAX_OTHER of the CPUs is repeated. */
export const { ROUNDS, QUIET_WAIT_S, MAX_OTHER_PCT } = commonEnv({
  ROUNDS: 2,
  QUIET_WAIT_S: 30,
  MAX_OTHER_PCT: 15,
});
export const MAX_OTHER = MAX_OTHER_PCT / 100;
/** gw's requests per second relative to the bare server doing the same store calls (issue: performance). */
export const TARGET_RATIO = 0.85;
/** [speed] item 2: gw's req/s over the bare server's (bare.ts), and unread at 1,000,000 over 10,000. */
export const TARGET_BARE_RATIO = 0.8;
export const TARGET_GROWTH = 1.2;
export const WRK = Bun.which("wrk");
export const LOADGEN: "wrk" | "bun" =
  process.env.BENCH_LOADGEN === "bun" || (process.env.BENCH_LOADGEN !== "wrk" && !WRK) ? "bun" : "wrk";
if (LOADGEN === "wrk" && !WRK) throw new Error("BENCH_LOADGEN=wrk but wrk is not on PATH");

export const LIMIT = 20;
export const UNREAD_PATH = `/messages/unread?limit=${LIMIT}`;
export const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
/** The agents timed by the growth measurement (present in every seeded database). */
export const GROWTH_AGENTS = ["agent-0", "agent-2", "agent-3"] as const;
export const CHANNELS = 50;
export const START_MS = Date.UTC(2024, 0, 1);
export const SPAN_MS = 2 * 365 * 86_400_000;
export const CHUNK = 50_000;

export const progress = progressLine("");

export const fmt = (n: number | null | undefined, digits = 2): string => {
  if (n === null || n === undefined || !Number.isFinite(n)) return "-";
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en-US");
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(digits);
};

export const round1 = (n: number | null) => (n === null ? null : Number(n.toFixed(n >= 100 ? 0 : 2)));
