/**
 * The benchmarks' one percentile definition (bench/lib/stats.ts): nearest rank, always a measured sample,
 * the lower middle sample as the median of an even count, p99 of fewer than 100 samples = the maximum.
 */
import { expect, test } from "bun:test";
import { ascending, dist, median, percentile, tailDist } from "../../bench/lib/stats.ts";

const oneToHundred = Array.from({ length: 100 }, (_, i) => i + 1);

test("percentile is the sample at rank ceil(p/100 · n)", () => {
  expect(percentile(oneToHundred, 50)).toBe(50);
  expect(percentile(oneToHundred, 90)).toBe(90);
  expect(percentile(oneToHundred, 99)).toBe(99);
  expect(percentile(oneToHundred, 100)).toBe(100);
  expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 95)).toBe(10);
  expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 91)).toBe(10);
  expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90)).toBe(9);
});

test("p99 of fewer than 100 samples is the maximum; p0 is the minimum; no samples is NaN", () => {
  expect(percentile([3, 7, 9], 99)).toBe(9);
  expect(percentile(Float64Array.from([1, 2, 3, 4]).sort(), 99)).toBe(4);
  expect(percentile([3, 7, 9], 0)).toBe(3);
  expect(percentile([], 50)).toBeNaN();
});

test("the median of an even count is the lower middle sample, never an interpolation", () => {
  expect(median([4, 1, 3, 2])).toBe(2);
  expect(median([5, 1, 3])).toBe(3);
  expect(ascending([3, 1, 2])).toEqual([1, 2, 3]);
});

test("dist and tailDist summarise with the same percentile", () => {
  expect(dist(oneToHundred)).toEqual({ n: 100, min: 1, p50: 50, p90: 90, p99: 99, max: 100, mean: 50.5 });
  expect(dist([1.234, 2.345], (x) => x).p50).toBe(1.234);
  expect(tailDist(oneToHundred)).toEqual({ n: 100, p50: 50, p95: 95, p99: 99, max: 100, mean: 50.5 });
});
