/**
 * bench/idle/idle.ts's checks after the window: where each gw's and the bare process's idle time goes (strace
 * attached to all of them at once for BENCH_IDLE_STRACE_S, lib/strace.ts; skipped without strace), and
 * whether notifications still work (the writer commits BENCH_IDLE_PICKUPS messages 300 ms apart and each
 * watcher's pick-up is timed from the commit, on our clock).
 */
import type { Subprocess } from "bun";
import type { Child } from "../lib/child.ts";
import { hasStrace, type TraceSummary, traceFile, traceProcess } from "../lib/strace.ts";
import type { Measured, Scene } from "./procs.ts";
import { PICKUPS, progress, STRACE_S } from "./settings.ts";

/** strace on each gw and on the bare process, at once; by process name, or why there is none. */
export async function traceIdle(scene: Scene, measured: readonly Measured[]) {
  const traces: Record<string, TraceSummary | string> = {};
  if (STRACE_S > 0 && hasStrace()) {
    progress(`strace on gw and the bare process for ${STRACE_S} s`);
    const targets = measured.filter((m) => m.role !== "peer");
    const out = await Promise.allSettled(
      targets.map((m, i) =>
        traceProcess(m.pid, STRACE_S, traceFile(scene.dir, String(i)), (p: Subprocess) =>
          scene.session.track(p),
        ),
      ),
    );
    out.forEach((o, i) => {
      const name = targets[i]?.name ?? String(i);
      traces[name] = o.status === "fulfilled" ? o.value : `strace failed: ${String(o.reason).split("\n")[0]}`;
    });
  } else if (STRACE_S > 0) traces.all = "strace is not installed: no syscall breakdown";
  return traces;
}

/** Notifications still work: commit, time each watcher's pick-up (ms from the commit, null if missed). */
export async function pickupsAfter(writer: Child, measured: readonly Measured[]) {
  const pickups: Record<string, (number | null)[]> = {};
  progress(`pick-up after the idle window: ${PICKUPS} commits`);
  for (let i = 0; i < PICKUPS; i++) {
    await Bun.sleep(300);
    const text = `idle pick-up ${crypto.randomUUID().slice(0, 8)} #${i}`;
    const r = await writer.request({ cmd: "commit", text });
    const tCommit = (r.tCommit as number) - writer.offsetMs;
    const deadline = tCommit + 5000;
    const seen = await Promise.all(measured.map((m) => (m.pickUp ? m.pickUp(text, deadline) : null)));
    measured.forEach((m, j) => {
      if (!m.pickUp) return;
      const t = seen[j];
      const list = pickups[m.name] ?? [];
      pickups[m.name] = list;
      list.push(t === null || t === undefined ? null : Math.round((t - tCommit) * 100) / 100);
    });
  }
  return pickups;
}
