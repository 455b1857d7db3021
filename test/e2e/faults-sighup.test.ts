/**
 * Faults survived, SIGHUP storms (test/evidence/faults/sighup.ts): 37 allowlist reloads of a real gw
 * serve, paced and back to back, one with an invalid file, while agents poll and mark read.
 */
import { expect, test } from "bun:test";
import { INVALID_AT, sighupFaults } from "../evidence/faults/sighup.ts";

test("SIGHUP storm under load: 0 failed requests, only new messages change class, an invalid file keeps the old list", async () => {
  const run = await sighupFaults();
  expect(run.rows.filter((r) => !r.ok)).toEqual([]);
  const d = run.details;
  expect(d.failed).toBe(0);
  expect(d.requests).toBeGreaterThan(0);
  for (const c of d.classified) expect(c.got).toBe(c.expected);
  expect(d.classified.find((c) => c.reload === INVALID_AT)?.got).toBe("allowed");
  expect(d.invalidKept).toBe(true);
  expect(d.changedLater).toBe(0);
  expect(d.burstFinal.got).toBe(d.burstFinal.expected);
}, 60_000);
