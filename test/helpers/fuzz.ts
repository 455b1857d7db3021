/**
 * Registers one bun:test test per bad-input item (test/evidence/fuzz/*) at scale 1 with the fixed CI
 * seed: it must try at least one case and every case must hold; a failure prints fast-check's report
 * (seed, counterexample, shrink path), so `FUZZ_SEED=<seed> bun run fuzz <item>` replays it.
 */
import { expect, test } from "bun:test";
import type { FuzzItem } from "../evidence/fuzz/types.ts";

export const CI_SEED = 20261124;

/** `cases`: the exact number of cases each item must try (default: at least one). */
export function fuzzTests(items: readonly FuzzItem[], timeoutMs = 60_000, cases?: number): void {
  for (const item of items) {
    test(
      `${item.id}: ${item.held}`,
      async () => {
        const out = await item.run({ scale: 1, seed: CI_SEED });
        expect(out.failures).toEqual([]);
        if (cases === undefined) expect(out.cases).toBeGreaterThan(0);
        else expect(out.cases).toBe(cases);
      },
      timeoutMs,
    );
  }
}
