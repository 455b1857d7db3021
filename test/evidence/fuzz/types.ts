/**
 * The shape shared by every bad-input property and corpus (test/evidence/fuzz/*): an item says what it
 * tries and what must hold, and `run` tries it `scale` times its short-mode count from one seed.
 * `bun test` runs scale 1 (test/integration/fuzz-*.test.ts); `bun run fuzz --long` runs scale 100.
 * A failure carries everything needed to replay it: the seed and, for fast-check, the counterexample
 * and its shrink path.
 */
import fc from "fast-check";
import { createRng } from "../chaos/rng.ts";

export interface RunOptions {
  /** 1 in `bun test` and the default runner; 100 with `--long`. */
  scale: number;
  seed: number;
}

export interface Outcome {
  /** Cases tried (requests sent, blobs decoded, paths refused...). */
  cases: number;
  /** Empty when everything held. */
  failures: string[];
  /** What was seen along the way, for the summary (e.g. "a refused case of each rule"). */
  notes?: string[];
}

export interface FuzzItem {
  id: string;
  /** What was tried, for the evidence table. */
  tried: string;
  /** What held (or had to), for the evidence table. */
  held: string;
  run(o: RunOptions): Promise<Outcome>;
}

/** Runs a fast-check property `numRuns` times from `seed`; a failure is fast-check's own report. */
export async function checkProperty<Ts>(
  prop: fc.IAsyncPropertyWithHooks<Ts> | fc.IPropertyWithHooks<Ts>,
  numRuns: number,
  seed: number,
): Promise<Outcome> {
  const details = await fc.check(prop as fc.IAsyncPropertyWithHooks<Ts>, {
    numRuns,
    seed,
    endOnFailure: false,
  });
  const error =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const failures = details.failed
    ? [
        `seed ${seed}: ${error.slice(0, 1500)}\n${(fc.defaultReportMessage(details) ?? "failed").slice(0, 3000)}`,
      ]
    : [];
  return { cases: details.numRuns, failures };
}

/** Adds up outcomes of several checks of one item. */
export function merge(...outcomes: Outcome[]): Outcome {
  return {
    cases: outcomes.reduce((n, o) => n + o.cases, 0),
    failures: outcomes.flatMap((o) => o.failures),
    notes: outcomes.flatMap((o) => o.notes ?? []),
  };
}

/** A small deterministic PRNG (the chaos runs' mulberry32) for corpora that are not fast-check properties. */
export const prng = (seed: number): (() => number) => createRng(seed).next;
