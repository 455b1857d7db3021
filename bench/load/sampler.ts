/**
 * What bench/load/load.ts reads from outside its processes during the load, never asking them: once a second
 * gw's RSS (/proc/<pid>/status), the WAL's size, the sink's count, gw's CPU and the other processes'
 * share of the CPUs (the machine's busy time minus every process of ours, reaped stand-ins included);
 * and the CPU of each process before and after the load.
 */
import { statSync } from "node:fs";
import type { Child } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import { machineBusyMs } from "../lib/machine.ts";
import { procCpuMs, sampleProc } from "../lib/proc.ts";
import type { Sink } from "../lib/sink.ts";
import { r1, r2 } from "../lib/stats.ts";
import { MiB } from "./settings.ts";

/** What the sampler reads of an attempt (run.ts's Attempt has it): its processes and gw's database. */
export interface Sampled {
  gwPid: number;
  dbPath: string;
  agents: Child;
  writer: Child;
  sink: Sink;
}

/** gw.db-wal's size, 0 when it does not exist. */
export function walBytes(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
}

export interface Sample {
  t: number;
  rssMiB: number;
  walMiB: number;
  sinkN: number;
  /** gw's CPU over the second before the sample, % of one core. */
  gwPct: number;
  /** Other processes' CPU over that second, % of all cores (machine busy minus ours). */
  otherPct: number | null;
}

/** CPU of every process of the attempt and of this script (since `since`, when given), and of the machine. */
export function cpuSnapshot(a: Sampled, since?: NodeJS.CpuUsage) {
  return {
    gw: procCpuMs(a.gwPid),
    agents: procCpuMs(a.agents.proc.pid),
    writer: procCpuMs(a.writer.proc.pid),
    sink: procCpuMs(a.sink.child.proc.pid),
    self: process.cpuUsage(since),
    machine: machineBusyMs(),
    at: now(),
  };
}

export type CpuSnapshot = ReturnType<typeof cpuSnapshot>;

/** Once a second from t0 to the end: gw's RSS, the WAL, the sink's count, gw's and the other processes' CPU. */
export async function sampleEverySecond(
  a: Sampled,
  t0: number,
  tEnd: number,
  samples: Sample[],
): Promise<void> {
  /** All the CPU our processes used so far (gw and its reaped stand-ins, the children, this script), ms. */
  const oursMs = () => {
    const g = procCpuMs(a.gwPid);
    const self = process.cpuUsage();
    return (
      (g ? g.self + g.children : 0) +
      (procCpuMs(a.agents.proc.pid)?.self ?? 0) +
      (procCpuMs(a.writer.proc.pid)?.self ?? 0) +
      (procCpuMs(a.sink.child.proc.pid)?.self ?? 0) +
      (self.user + self.system) / 1000
    );
  };
  let prev = { at: now(), machine: machineBusyMs(), ours: oursMs(), gw: procCpuMs(a.gwPid)?.self ?? 0 };
  for (let s = 0; ; s++) {
    const due = t0 + s * 1000;
    if (due > tEnd + 1) return;
    const wait = due - now();
    if (wait > 0) await Bun.sleep(wait);
    const p = sampleProc(a.gwPid);
    const cur = { at: now(), machine: machineBusyMs(), ours: oursMs(), gw: procCpuMs(a.gwPid)?.self ?? 0 };
    const span = cur.at - prev.at;
    samples.push({
      t: s,
      rssMiB: r2(p.rssKiB / 1024),
      walMiB: r2(walBytes(a.dbPath) / MiB),
      sinkN: (await a.sink.count()).n,
      gwPct: r1(((cur.gw - prev.gw) / span) * 100),
      otherPct:
        cur.machine === null || prev.machine === null
          ? null
          : r1(
              (Math.max(0, cur.machine - prev.machine - (cur.ours - prev.ours)) /
                span /
                navigator.hardwareConcurrency) *
                100,
            ),
    });
    prev = cur;
  }
}
