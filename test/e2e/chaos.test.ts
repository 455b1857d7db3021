/**
 * Crashes survived, short mode (what CI runs; `bun run chaos --long` is the 200-cycle run): 30 kill -9
 * cycles of a real `gw serve` across start-up, ingest bursts, webhook delivery and sends in flight,
 * SIGTERM under load, a final clean run, then kill -9 of `gw receiver` mid-run. Every invariant of
 * reliability.md 8.4 is asserted: after every kill (integrity, no duplicate rows, nothing lost at or
 * below the cursors, one delivery row per allowlisted message, no key sent twice, no event twice or
 * without its change, changed messages as their events say) and at the end
 * (every source message stored exactly once, every allowlisted one delivered or dead only when always
 * refused, every 200 sent and recorded once, every edit, unsend and reaction owed an event stored
 * exactly once, file modes, no canary in logs), plus, for the receiver, no
 * orphaned agent and every accepted message run after the restart (in channel order, marked
 * interrupted, never twice in one lifetime). CHAOS_SEED repeats a schedule; the seed is in every failure
 * message.
 */
import { expect, test } from "bun:test";
import { seedFrom } from "../evidence/chaos/rng.ts";
import { runChaos } from "../evidence/chaos/run.ts";

const seed = seedFrom(process.env);

test(`chaos, short mode: 30 kill -9 cycles, SIGTERM under load, receiver kills (seed ${seed})`, async () => {
  const report = await runChaos({
    cycles: 30,
    seed,
    receiverRounds: 2,
    sigtermRounds: 1,
    binary: "fresh",
    settleTimeoutMs: 20_000,
  });
  const context = `seed ${seed}: ${report.summary}`;
  expect(report.errors, context).toEqual([]);

  expect(report.cycles, context).toHaveLength(30);
  for (const c of report.cycles) {
    expect(c.error, `${context}; cycle ${c.cycle} (${c.phase})`).toBeNull();
    expect(c.killed, `${context}; cycle ${c.cycle}`).toBe(true);
    expect(c.failures, `${context}; cycle ${c.cycle} (${c.phase})`).toEqual([]);
  }
  for (const phase of ["start-up", "ingest", "delivery", "send"])
    expect(report.cycles.filter((c) => c.phase === phase).length, context).toBeGreaterThanOrEqual(7);

  for (const v of report.finalVerdicts) expect(v.held, `${context}; ${v.name}: ${v.detail}`).toBe(true);
  expect(report.finalVerdicts.length, context).toBeGreaterThanOrEqual(10);
  expect(report.settle?.exitCode, context).toBe(0);

  const t = report.totals;
  expect(t.in, context).toBeGreaterThan(100);
  expect([t.stored, t.lost, t.duplicateRows, t.duplicateSends], context).toEqual([t.in, 0, 0, 0]);
  expect(t.delivered + t.dead, context).toBe(t.allowed);
  expect(t.changesIMessage, context).toBeGreaterThan(0);
  expect(t.changesDiscord, context).toBeGreaterThan(0);
  expect(t.duplicateEvents, context).toBe(0);
  expect(t.keys, context).toBeGreaterThan(0);

  expect(report.sigterm, context).toHaveLength(1);
  for (const s of report.sigterm) {
    expect(s.exitCode, context).toBe(0);
    expect(s.problems, context).toEqual([]);
    expect(s.acknowledged.listed, context).toBeGreaterThan(0);
    expect(s.readByGw, context).toBeGreaterThan(0);
  }

  expect(report.receiver, context).toMatchObject({ rounds: 2, orphans: 0, problems: [] });
  // Two rounds: at least the two hanging runs of each were re-run after its kill.
  expect(report.receiver?.rerun, context).toBeGreaterThanOrEqual(4);
  expect(report.receiver?.ended, context).toBe(report.receiver?.accepted);
  expect(
    report.rows.every((r) => r.ok),
    context,
  ).toBe(true);
  expect(report.ok, context).toBe(true);
}, 120_000);
