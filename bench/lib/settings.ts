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
