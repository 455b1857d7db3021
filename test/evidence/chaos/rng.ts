/**
 * Seeded randomness for the chaos runs (pure): mulberry32, so one seed gives the same schedule of
 * phases, kill delays, burst sizes and message markers every time. (What the processes do inside that
 * schedule still depends on the machine's timing; the seed makes a run repeatable, not identical.)
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function createRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)] as never,
  };
}

/**
 * The seed from `env[name]` (CHAOS_SEED by default; decimal), else one drawn now (and reported, so the
 * run can be repeated).
 */
export function seedFrom(env: Record<string, string | undefined>, name = "CHAOS_SEED"): number {
  const raw = env[name]?.trim();
  if (raw) {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, not ${raw}`);
    return n >>> 0;
  }
  return Math.floor(Math.random() * 2 ** 31);
}
