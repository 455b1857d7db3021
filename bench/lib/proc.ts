/**
 * What a process costs, read from Linux /proc without touching the process (no wake-up of its own):
 * CPU time of the whole thread group from /proc/<pid>/stat (utime + stime, exited threads included, in
 * clock ticks of 10 ms), CPU time and run count of each thread from /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds; the run count counts the times the thread was put on a CPU, i.e. its wake-ups while
 * mostly asleep), kept per thread by a ledger, and RSS from /proc/<pid>/status. Plus a least-squares
 * slope for RSS samples. The machine as a whole (/proc/stat) is lib/machine.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { r3 } from "./stats.ts";

const TICK_MS = 10; // USER_HZ = 100 on Linux

export interface ThreadSample {
  tid: number;
  name: string;
  cpuNs: number;
  runs: number;
}

export interface ProcSample {
  /** Our monotonic clock when read, ms. */
  at: number;
  /** utime + stime of the thread group, ms (10 ms resolution). */
  cpuMs: number;
  threads: ThreadSample[];
  rssKiB: number;
  hwmKiB: number;
}

export function threadSamples(pid: number): ThreadSample[] {
  const out: ThreadSample[] = [];
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const [ns, , runs] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ");
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      out.push({ tid: Number(tid), name, cpuNs: Number(ns), runs: Number(runs) });
    } catch {
      // the thread exited between the listing and the read
    }
  }
  return out;
}

/**
 * utime + stime of the thread group (`self`) and of its reaped children (`children`: cutime + cstime),
 * ms, from /proc/<pid>/stat; throws when the process is gone.
 */
function statCpuMs(pid: number): { self: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name: utime, stime, cutime, cstime are fields 14–17 (1-based).
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return {
    self: (Number(f[11]) + Number(f[12])) * TICK_MS,
    children: (Number(f[13]) + Number(f[14])) * TICK_MS,
  };
}

/** CPU time of a process and of its reaped children, ms (10 ms resolution); null when it is gone. */
export function procCpuMs(pid: number): { self: number; children: number } | null {
  try {
    return statCpuMs(pid);
  } catch {
    return null;
  }
}

/** One reading of a live process; throws when it is gone. */
export function sampleProc(pid: number): ProcSample {
  const cpuMs = statCpuMs(pid).self;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key: string) =>
    Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return {
    at: performance.now(),
    cpuMs,
    threads: threadSamples(pid),
    rssKiB: kib("VmRSS"),
    hwmKiB: kib("VmHWM"),
  };
}

export interface ThreadCost {
  name: string;
  /** How many threads of that name ran in the window (short-lived ones come and go). */
  threads: number;
  cpuMs: number;
  /** Times put on a CPU over the window, per second. */
  runsPerS: number;
}

/** Each thread's schedstat reading at one instant (see ThreadLedger.mark). */
export type ThreadMark = ReadonlyMap<number, ThreadSample>;

/**
 * Every thread of one process ever seen, from schedstat readings taken as often as the caller observes
 * (every 500 ms in idle/idle.ts). The cost since a mark counts each thread from its reading in the mark, or
 * from zero when it was first seen later (born after the mark), up to its last reading, so threads that
 * exit in between count too (all but what they ran after their last reading). Nanosecond precision.
 */
export class ThreadLedger {
  private readonly byTid = new Map<number, ThreadSample>();

  constructor(
    readonly pid: number,
    start: readonly ThreadSample[],
  ) {
    this.observe(start);
  }

  observe(threads: readonly ThreadSample[]): void {
    for (const t of threads) this.byTid.set(t.tid, t);
  }

  mark(): ThreadMark {
    return new Map(this.byTid);
  }

  since(mark: ThreadMark, wallMs: number): { cpuMs: number; byThread: ThreadCost[] } {
    const byName = new Map<string, ThreadCost>();
    let ns = 0;
    for (const [tid, last] of this.byTid) {
      const first = mark.get(tid);
      const dNs = last.cpuNs - (first?.cpuNs ?? 0);
      const runs = last.runs - (first?.runs ?? 0);
      if (dNs === 0 && runs === 0) continue;
      ns += dNs;
      // The event-loop thread is the thread-group leader; Bun's pool threads are numbered.
      const name = tid === this.pid ? "main (event loop)" : last.name.replace(/\s\d+$/, " N");
      const c = byName.get(name) ?? { name, threads: 0, cpuMs: 0, runsPerS: 0 };
      c.threads += 1;
      c.cpuMs += dNs / 1e6;
      c.runsPerS += runs / (wallMs / 1000);
      byName.set(name, c);
    }
    return {
      cpuMs: ns / 1e6,
      byThread: [...byName.values()]
        .map((c) => ({ ...c, cpuMs: r3(c.cpuMs), runsPerS: r3(c.runsPerS) }))
        .sort((x, y) => y.cpuMs - x.cpuMs),
    };
  }
}

export interface WindowCost {
  wallS: number;
  /** Sum over the threads of the ledger (ns precision): the figure judged. */
  cpuMs: number;
  cpuPct: number;
  /** Cross-check: utime + stime of the thread group from /proc/<pid>/stat, ±2 ticks (20 ms). */
  statCpuMs: number;
  statCpuPct: number;
  byThread: ThreadCost[];
}

/** CPU over the window between two samples of one process; `mark` is the ledger's mark taken with `a`. */
export function windowCost(a: ProcSample, b: ProcSample, ledger: ThreadLedger, mark: ThreadMark): WindowCost {
  const wallMs = b.at - a.at;
  const t = ledger.since(mark, wallMs);
  const statMs = b.cpuMs - a.cpuMs;
  return {
    wallS: r3(wallMs / 1000),
    cpuMs: r3(t.cpuMs),
    cpuPct: r3((t.cpuMs / wallMs) * 100),
    statCpuMs: r3(statMs),
    statCpuPct: r3((statMs / wallMs) * 100),
    byThread: t.byThread,
  };
}

/** Least-squares slope of y over x (same units per x unit); NaN with fewer than two points. */
export function slope(points: readonly (readonly [x: number, y: number])[]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}
