/**
 * The benchmarks' one definition of a percentile, and the summaries built on it: a seeded generator
 * and the draws made from it (Zipf-like ranks, a shuffled order), rounding, `percentile` (nearest rank: the smallest sample with at least p % of the samples at
 * or below it, so always a measured value; R's quantile type 1, numpy's "inverted_cdf"), `median` and
 * the distribution shapes the reports carry. Every percentile a benchmark computes goes through here.
 */

/** A seeded pseudo-random generator in [0, 1) (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The p-th percentile (0 < p ≤ 100) of samples sorted ascending, by nearest rank: the sample at rank
 * ⌈p/100 · n⌉ (1-based), clamped to [1, n]. NaN for no samples.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * n);
  return sorted[Math.min(n - 1, Math.max(0, rank - 1))] as number;
}

/**
 * A Zipf-like draw of 0..n-1 from the stream it is given: rank r with weight 1/(r+1)^s (the inverse of
 * the cumulative weights, by binary search).
 */
export function zipf(n: number, s: number): (random: () => number) => number {
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let r = 0; r < n; r++) {
    total += 1 / (r + 1) ** s;
    cumulative[r] = total;
  }
  return (random) => {
    const u = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** 0..n-1 in an order drawn from `random` (Fisher–Yates). */
export function shuffled(n: number, random: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  return order;
}

/** A Zipf-like pick of 0..n-1 over a seeded shuffle of the ranks: which items are busy is drawn too. */
export function zipfPicker(n: number, s: number, random: () => number): () => number {
  const order = shuffled(n, random);
  const rank = zipf(n, s);
  return () => order[rank(random)] as number;
}

/** An ascending copy (NaN and the like sort as the comparator leaves them). */
export const ascending = (values: Iterable<number>): number[] => [...values].sort((a, b) => a - b);

/** The nearest-rank median: for an even count, the lower of the two middle samples. */
export const median = (values: Iterable<number>): number => percentile(ascending(values), 50);

/** Rounded to 1, 2 or 3 decimals. */
export const r1 = (x: number): number => Math.round(x * 10) / 10;
export const r2 = (x: number): number => Math.round(x * 100) / 100;
export const r3 = (x: number): number => Math.round(x * 1000) / 1000;

export interface Dist {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** n, min, p50, p90, p99, max and mean, each passed through `round` (2 decimals unless given). */
export function dist(values: readonly number[], round: (x: number) => number = r2): Dist {
  const s = ascending(values);
  return {
    n: s.length,
    min: round(s[0] ?? Number.NaN),
    p50: round(percentile(s, 50)),
    p90: round(percentile(s, 90)),
    p99: round(percentile(s, 99)),
    max: round(s[s.length - 1] ?? Number.NaN),
    mean: round(s.reduce((a, b) => a + b, 0) / (s.length || 1)),
  };
}

/** The Discord benchmark's shape: p95 in place of min and p90, 2 decimals. */
export interface TailDist {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function tailDist(values: readonly number[]): TailDist {
  const s = ascending(values);
  return {
    n: s.length,
    p50: r2(percentile(s, 50)),
    p95: r2(percentile(s, 95)),
    p99: r2(percentile(s, 99)),
    max: r2(s[s.length - 1] ?? Number.NaN),
    mean: r2(s.reduce((a, b) => a + b, 0) / (s.length || 1)),
  };
}
