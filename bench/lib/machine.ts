/**
 * How busy the whole machine is, from the aggregate `cpu` line of Linux /proc/stat (every process, ours
 * included; the VM may be shared with other work): busy time in two senses, the busy share over a
 * phase, the hypervisor's steal share, and a wait for a quiet machine before a timed run. Every reader
 * returns null off Linux. Jiffies are USER_HZ = 100 ticks, so 10 ms each.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";

const JIFFY_MS = 10;

/** The `cpu` line's fields in jiffies: user nice system idle iowait irq softirq steal guest guest_nice. */
export function cpuJiffies(): number[] | null {
  try {
    return (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return null;
  }
}

const at = (f: readonly number[], i: number) => f[i] ?? 0;

/** Busy time of all CPUs (user + nice + system + irq + softirq + steal), ms. */
export function machineBusyMs(): number | null {
  const f = cpuJiffies();
  return f && (at(f, 0) + at(f, 1) + at(f, 2) + at(f, 5) + at(f, 6) + at(f, 7)) * JIFFY_MS;
}

/**
 * Time all CPUs spent in processes (user + nice + system + steal; not irq/softirq, which loopback
 * networking charges to no process), ms: what a process's own CPU time can be subtracted from.
 */
export function machineProcessMs(): number | null {
  const f = cpuJiffies();
  return f && (at(f, 0) + at(f, 1) + at(f, 2) + at(f, 7)) * JIFFY_MS;
}

/** Share of all the jiffies between two readings that the hypervisor took (steal). */
export function stealShare(a: readonly number[] | null, b: readonly number[] | null): number | null {
  if (!a || !b) return null;
  const total = (f: readonly number[]) => f.reduce((s, x) => s + x, 0);
  return total(b) > total(a) ? (at(b, 7) - at(a, 7)) / (total(b) - total(a)) : null;
}

/** Busy (all but idle and iowait) and total jiffies of the first eight fields. */
function busyAndTotal(): { busy: number; total: number } | null {
  const f = cpuJiffies();
  if (!f) return null;
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - at(f, 3) - at(f, 4), total };
}

export interface MachineLoad {
  /** Share of all cores busy over the phase, this benchmark's own processes included. */
  busyPctAllCores: number | null;
  load1Start: number;
  load1End: number;
}

/** Runs a phase and says how busy the whole machine was meanwhile. */
export async function withMachineLoad<T>(run: () => Promise<T>): Promise<[T, MachineLoad]> {
  const load1Start = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  const a = busyAndTotal();
  const out = await run();
  const b = busyAndTotal();
  return [
    out,
    {
      busyPctAllCores: a && b ? Math.round(((b.busy - a.busy) / (b.total - a.total || 1)) * 1000) / 10 : null,
      load1Start,
      load1End: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    },
  ];
}

/**
 * Waits (up to `maxS` seconds) until the machine was less than 10% busy over the last second, so that a
 * timed run does not start while something else is using the CPUs. Returns the seconds waited.
 */
export async function waitQuiet(maxS: number, progress: (s: string) => void): Promise<number> {
  const t0 = performance.now();
  let said = false;
  while ((performance.now() - t0) / 1000 < maxS) {
    const b0 = machineBusyMs();
    await Bun.sleep(1000);
    const b1 = machineBusyMs();
    if (b0 === null || b1 === null) return 0;
    const share = (b1 - b0) / (1000 * navigator.hardwareConcurrency);
    if (share < 0.1) break;
    if (!said) progress(`waiting for a quiet machine (${Math.round(share * 100)}% busy)`);
    said = true;
  }
  return Math.round((performance.now() - t0) / 1000);
}
