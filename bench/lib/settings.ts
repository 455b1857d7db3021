/**
 * What every benchmark's settings share: BENCH_ variables read once at start-up (an integer with a
 * floor, an on/off flag, a comma list of known words), the two every benchmark reads alike (BENCH_KEEP,
 * BENCH_SEED), this run's bearer token and webhook secret, the PATH children get, the stderr progress
 * line and elapsed milliseconds. Each room's settings.ts adds its own sizes and targets.
 */

export function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw.replaceAll("_", ""));
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  return n;
}

/**
 * The BENCH_ variables several benchmarks read, each meaning the same wherever it is read, with the
 * floor it holds to: timed samples and untimed ones before them, the pause between two steps, how long
 * a sighting may take before it is stuck, timed requests per case, the longest wait for a quiet
 * machine, an idle window, the share of the CPUs other processes may use, repeated rounds.
 */
const COMMON_FLOORS = {
  SAMPLES: 1,
  WARMUP: 0,
  STEP_MS: 0,
  STUCK_MS: 100,
  REQUESTS: 10,
  QUIET_WAIT_S: 0,
  IDLE_S: 1,
  MAX_OTHER_PCT: 0,
  ROUNDS: 1,
} as const;

/** A room's common settings with its own defaults: `commonEnv({ SAMPLES: 200, WARMUP: 10 })`. */
export function commonEnv<K extends keyof typeof COMMON_FLOORS>(
  defaults: Record<K, number>,
): Record<K, number> {
  const values = {} as Record<K, number>;
  for (const key of Object.keys(defaults) as K[])
    values[key] = intEnv(`BENCH_${key}`, defaults[key], COMMON_FLOORS[key]);
  return values;
}

/** The defaults of a route's cases timed over HTTP (lib/http-cases.ts; channels, events). */
export const ROUTE_CASE_DEFAULTS = { REQUESTS: 2_000, WARMUP: 200, QUIET_WAIT_S: 10 };

/** 1 on, 0 off. */
export const flagEnv = (name: string, fallback: boolean): boolean => intEnv(name, fallback ? 1 : 0, 0) === 1;

/** A comma list of words, each one of `known` in any case (returned as `known` spells it), e.g. BENCH_PHASES. */
export function listEnv<T extends string>(name: string, fallback: string, known: readonly T[]): T[] {
  return (process.env[name] || fallback)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((w) => {
      const k = known.find((k) => k.toLowerCase() === w.toLowerCase());
      if (k === undefined) throw new Error(`${name}: unknown value ${w} (known: ${known.join(", ")})`);
      return k;
    });
}

/** BENCH_KEEP=1 keeps the run's temp dirs (named on stderr). */
export const KEEP = flagEnv("BENCH_KEEP", false);
/** BENCH_SEED: the seeded streams' seed; a run with the same settings draws the same numbers. */
export const SEED = intEnv("BENCH_SEED", 1, 0);

/** This run's bearer token and webhook secret (fresh each run). */
export const TOKEN = `bench-${crypto.randomUUID()}`;
export const SECRET = `whsec-${crypto.randomUUID()}`;
/** The PATH a child process gets. */
export const PATH = process.env.PATH ?? "/usr/bin:/bin";

/** A progress line on stderr, `[tag] ` first unless the tag is empty. */
export const progressLine =
  (tag: string) =>
  (s: string): void =>
    void process.stderr.write(tag ? `[${tag}] ${s}\n` : `${s}\n`);

/** Whole milliseconds since `t0` (a performance.now()). */
export const elapsed = (t0: number): number => Math.round(performance.now() - t0);
