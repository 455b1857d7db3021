/**
 * bench/idle/idle.ts's window, read from /proc only (lib/proc.ts; nothing is asked of the processes): every
 * thread's schedstat every THREAD_SAMPLE_MS from the start of the settle period, and stat, RSS and a
 * ledger mark every BENCH_IDLE_SAMPLE_S. Per process over the window: CPU % of one core summed over all
 * threads (those that came and went included; utime + stime as a cross-check), per thread, per
 * interval; RSS at start, end, max and its least-squares slope.
 */

import { type MachineLoad, withMachineLoad } from "../lib/machine.ts";
import {
  type ProcSample,
  sampleProc,
  slope,
  ThreadLedger,
  type ThreadMark,
  threadSamples,
  type WindowCost,
  windowCost,
} from "../lib/proc.ts";
import type { Measured } from "./procs.ts";
import { IDLE_S, progress, SAMPLE_S, SETTLE_S, THREAD_SAMPLE_MS } from "./settings.ts";

export interface ProcResult {
  name: string;
  role: Measured["role"];
  pid: number;
  /** CPU % of one core per SAMPLE_S interval from the start of the settle period (ns, all threads). */
  cpuPctSeries: number[];
  /** Index in cpuPctSeries where the window starts. */
  windowStartsAt: number;
  window: WindowCost;
  rss: {
    startMiB: number;
    endMiB: number;
    maxMiB: number;
    growthKiB: number;
    slopeKiBPerMin: number;
    samplesMiB: number[];
  };
  hwmMiB: number;
}

const mib = (kib: number) => Math.round((kib / 1024) * 100) / 100;

type Full = { sample: ProcSample; mark: ThreadMark };

/** Every process's ledger and full samples, taken by `watch`. */
function sampler(measured: readonly Measured[]) {
  const first = measured.map((m) => sampleProc(m.pid));
  const ledgers = measured.map((m, i) => new ThreadLedger(m.pid, first[i]?.threads ?? []));
  const full: Full[][] = [first.map((sample, i) => ({ sample, mark: (ledgers[i] as ThreadLedger).mark() }))];
  const takeFull = () =>
    full.push(
      measured.map((m, i) => {
        const sample = sampleProc(m.pid);
        const ledger = ledgers[i] as ThreadLedger;
        ledger.observe(sample.threads);
        return { sample, mark: ledger.mark() };
      }),
    );
  /** Samples until `ms` from now: threads every THREAD_SAMPLE_MS, a full sample every SAMPLE_S and at the end. */
  const watch = async (ms: number) => {
    const t0 = performance.now();
    const end = t0 + ms;
    let nextFull = t0 + SAMPLE_S * 1000;
    for (;;) {
      const left = end - performance.now();
      if (left > 0) await Bun.sleep(Math.min(THREAD_SAMPLE_MS, left));
      const at = performance.now();
      if (at >= end) {
        takeFull();
        return;
      }
      if (at >= nextFull) {
        nextFull += SAMPLE_S * 1000;
        takeFull();
      } else {
        for (const [i, m] of measured.entries()) ledgers[i]?.observe(threadSamples(m.pid));
      }
    }
  };
  return { ledgers, full, watch };
}

/** One process's figures from the full samples (the window starts at full sample `w0`). */
function procResult(
  m: Measured,
  i: number,
  full: readonly Full[][],
  ledger: ThreadLedger,
  w0: number,
): ProcResult {
  const at = (k: number) => (full[k] as Full[])[i] as Full;
  const series = full.slice(w0).map((_, k) => at(w0 + k).sample);
  const a = at(w0);
  const b = at(full.length - 1);
  const pts = series.map((x) => [(x.at - a.sample.at) / 60_000, x.rssKiB] as const);
  // CPU % of one core per SAMPLE_S interval from the start of the settle period, from the marks.
  const cpuSeries = full.slice(1).map((_, k) => {
    const x = at(k);
    const y = at(k + 1);
    const ms = [...y.mark].reduce((sum, [tid, t]) => sum + t.cpuNs - (x.mark.get(tid)?.cpuNs ?? 0), 0) / 1e6;
    return Math.round((ms / (y.sample.at - x.sample.at)) * 100_000) / 1000;
  });
  return {
    name: m.name,
    role: m.role,
    pid: m.pid,
    cpuPctSeries: cpuSeries,
    windowStartsAt: w0,
    window: windowCost(a.sample, b.sample, ledger, a.mark),
    rss: {
      startMiB: mib(a.sample.rssKiB),
      endMiB: mib(b.sample.rssKiB),
      maxMiB: mib(Math.max(...series.map((x) => x.rssKiB))),
      growthKiB: b.sample.rssKiB - a.sample.rssKiB,
      slopeKiBPerMin: Math.round(slope(pts) * 10) / 10,
      samplesMiB: series.map((x) => mib(x.rssKiB)),
    },
    hwmMiB: mib(b.sample.hwmKiB),
  };
}

/** Settle, then the window with the machine's load over it; each process's figures. */
export async function idleWindow(
  measured: readonly Measured[],
): Promise<{ procs: ProcResult[]; machine: MachineLoad }> {
  // Every thread of every process is read every THREAD_SAMPLE_MS from the start of the settle period;
  // a full sample (stat, RSS, a ledger mark) every SAMPLE_S.
  const { ledgers, full, watch } = sampler(measured);
  progress(
    `settling ${SETTLE_S} s, then ${IDLE_S} s idle: ${measured.map((m) => `${m.name} (${m.pid})`).join(", ")}`,
  );
  await watch(SETTLE_S * 1000);
  const w0 = full.length - 1;
  const [, machine] = await withMachineLoad(() => watch(IDLE_S * 1000));
  progress(`window done`);
  return { procs: measured.map((m, i) => procResult(m, i, full, ledgers[i] as ThreadLedger, w0)), machine };
}
