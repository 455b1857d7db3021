/**
 * One whole chaos run (used by `bun run chaos` and test/e2e/chaos.test.ts): warm-up, `cycles` kill -9
 * cycles over the four phases in a seeded order (one of them with the compiled dist/gw when a fresh
 * build exists, or when `binary: "build"` builds it), SIGTERM under load, the clean settle run, the
 * final invariants, then the receiver kills in a world of their own. Returns the evidence rows, the
 * summary line in reliability.md 8.4's style, and every detail a test asserts on. `ok` is false when
 * anything did not hold.
 */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { BINARY, ensureBinary, ROOT } from "../../helpers/process.ts";
import { final, type Verdict } from "./checks.ts";
import { type CycleResult, PHASES, type Phase, runCycle } from "./kill-loop.ts";
import { createLedger } from "./load.ts";
import { type ReceiverKillResult, receiverKill } from "./receiver-kill.ts";
import { type ChaosReport, emptyTotals, evidenceRows, summaryLine, totalsOf } from "./report.ts";
import { createRng } from "./rng.ts";
import { settle, warmUp } from "./settle.ts";
import { checkAcknowledged, type SigtermResult, sigtermUnderLoad } from "./sigterm-load.ts";
import { snapshot } from "./snapshot.ts";
import { createWorld } from "./world.ts";

export type { ChaosReport };

/** The receiver kills draw from their own stream of the seed, so their schedule does not depend on the cycles. */
const RECEIVER_SEED_MIX = 0x52454356;

export interface ChaosOptions {
  cycles: number;
  seed: number;
  receiverRounds: number;
  sigtermRounds: number;
  /** "fresh": use dist/gw for one cycle only if it is newer than every source; "build": build it first. */
  binary: "fresh" | "build" | "off";
  settleTimeoutMs: number;
  /** Progress lines (the CLI prints them; the test stays quiet). */
  log?: (line: string) => void;
}

function binaryIsFresh(): boolean {
  if (!existsSync(BINARY)) return false;
  let newest = statSync(join(ROOT, "package.json")).mtimeMs;
  for (const f of new Bun.Glob("src/**/*.ts").scanSync({ cwd: ROOT }))
    newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs);
  return statSync(BINARY).mtimeMs >= newest;
}

/** The phases of `n` cycles: as even as can be, in a seeded order. Pure but for the rng. */
export function schedule(n: number, rng: ReturnType<typeof createRng>): Phase[] {
  const phases = Array.from({ length: n }, (_, i) => PHASES[i % PHASES.length] as Phase);
  for (let i = phases.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [phases[i], phases[j]] = [phases[j] as Phase, phases[i] as Phase];
  }
  return phases;
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => {});
  const rng = createRng(o.seed);
  const ledger = createLedger();
  const errors: string[] = [];
  const cycles: CycleResult[] = [];
  let binaryCycle = false;
  if (o.binary === "build") await ensureBinary();
  const useBinary = o.binary !== "off" && binaryIsFresh();
  const phases = schedule(o.cycles, rng);
  const binaryAt = useBinary ? phases.indexOf("ingest") : -1;

  const w = await createWorld();
  let settled: ChaosReport["settle"] = null;
  const sigterm: SigtermResult[] = [];
  let finalVerdicts: Verdict[] = [];
  let totals = emptyTotals();
  try {
    await warmUp(w, rng, ledger);
    for (const [i, phase] of phases.entries()) {
      const binary = i === binaryAt;
      const r = await runCycle(w, rng, ledger, i + 1, phase, { binary });
      binaryCycle ||= binary && r.error === null;
      cycles.push(r);
      const bad = r.failures.map((f) => `${f.name}: ${f.detail}`);
      if (r.error) bad.unshift(r.error);
      log(
        `cycle ${i + 1}/${o.cycles} ${phase}${binary ? " (dist/gw)" : ""}: kill after ${r.killAfterMs} ms${bad.length ? ` — FAILED: ${bad.join(" | ")}` : ""}`,
      );
    }
    for (let i = 0; i < o.sigtermRounds; i++) {
      const r = await sigtermUnderLoad(w, rng, ledger);
      sigterm.push(r);
      log(
        `SIGTERM under load: exit ${r.exitCode} in ${r.stopMs} ms${r.problems.length ? ` — ${r.problems.join("; ")}` : ""}`,
      );
    }
    settled = await settle(w, rng, ledger, o.settleTimeoutMs);
    for (const r of sigterm)
      r.problems.push(...checkAcknowledged(w, r.acked, "all").problems.map((p) => `after restart: ${p}`));
    log(`settle run: exit ${settled.exitCode}, ${settled.retried} unanswered key(s) retried`);
    const snap = snapshot(w, ledger, true);
    finalVerdicts = final(snap);
    totals = totalsOf(snap);
  } catch (err) {
    errors.push(String(err));
  } finally {
    await w.close();
  }
  let receiver: ReceiverKillResult | null = null;
  try {
    receiver = await receiverKill(o.receiverRounds, createRng((o.seed ^ RECEIVER_SEED_MIX) >>> 0));
    log(
      `receiver kills: ${receiver.rounds}, ${receiver.orphans} orphan(s), ${receiver.accepted} accepted, ${receiver.ended} run to their end (${receiver.rerun} after a restart)${receiver.problems.length ? ` — ${receiver.problems.slice(0, 3).join("; ")}` : ""}`,
    );
  } catch (err) {
    errors.push(`receiver kill: ${String(err)}`);
  }

  const report = {
    seed: o.seed,
    cycles,
    binaryCycle,
    finalVerdicts,
    settle: settled,
    sigterm,
    receiver,
    totals,
    errors,
  };
  const rows = evidenceRows(report);
  const ok = errors.length === 0 && rows.every((r) => r.ok);
  return { ...report, rows, ok, summary: summaryLine(report) };
}
