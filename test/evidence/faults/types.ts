/**
 * What a fault scenario returns: evidence rows for docs/EVIDENCE.md (what was tried, how many times,
 * what held, whether it all did), notes for the section, and the figures the tests assert on.
 */
import type { EvidenceRow } from "../../../bench/lib/evidence.ts";

export type { EvidenceRow };

export interface FaultRun<D> {
  rows: EvidenceRow[];
  notes: string[];
  details: D;
}

/** A row whose verdict is the conjunction of named checks; the failed ones are named in `held`. */
export function row(
  tried: string,
  times: number,
  held: string,
  checks: Record<string, boolean>,
): EvidenceRow {
  const failed = Object.entries(checks)
    .filter(([, ok]) => !ok)
    .map(([name]) => name);
  return {
    tried,
    times,
    held: failed.length === 0 ? held : `${held} — did not hold: ${failed.join(", ")}`,
    ok: failed.length === 0,
  };
}
