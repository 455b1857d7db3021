/**
 * The lifetime of one benchmark run: its temp dirs and the processes it started (lib/child.ts children
 * and any other subprocess), all removed or stopped by `cleanup()`, which also runs on SIGINT/SIGTERM
 * (exit 130). With `keep` the temp dirs stay and are named on stderr. Also the machine's busy share
 * over a phase (/proc/stat, every process included), since the VM may be shared.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { live } from "./child.ts";

export interface Session {
  tempDir(prefix: string): string;
  /** Removes a dir now, or at cleanup when it is one of ours. */
  own(dir: string): void;
  track(proc: Subprocess): void;
  cleanup(): void;
}

export function startSession(progress: (s: string) => void, keep: boolean): Session {
  const dirs = new Set<string>();
  const procs = new Set<Subprocess>();
  let cleaned = false;
  const s: Session = {
    tempDir(prefix) {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.add(d);
      return d;
    },
    own(dir) {
      dirs.add(dir);
    },
    track(proc) {
      procs.add(proc);
      void proc.exited.then(() => procs.delete(proc));
    },
    cleanup() {
      if (cleaned) return;
      cleaned = true;
      for (const c of live) c.proc.kill("SIGKILL");
      for (const p of procs) p.kill("SIGKILL");
      for (const d of dirs) {
        if (keep) progress(`kept ${d}`);
        else rmSync(d, { recursive: true, force: true });
      }
    },
  };
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      s.cleanup();
      process.exit(130);
    });
  }
  return s;
}

/** Busy and total jiffies over all CPUs from /proc/stat, or null off Linux. */
function jiffies(): { busy: number; total: number } | null {
  try {
    const f = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return null;
  }
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
  const a = jiffies();
  const out = await run();
  const b = jiffies();
  return [
    out,
    {
      busyPctAllCores: a && b ? Math.round(((b.busy - a.busy) / (b.total - a.total || 1)) * 1000) / 10 : null,
      load1Start,
      load1End: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    },
  ];
}
