/**
 * bench/idle/idle.ts's report: the per-process table (CPU ms and % of a core over the window, utime+stime,
 * RSS start/end/max and slope), per thread and per interval for gw and the bare process with strace's
 * wake-ups by source, the pick-ups; the summary rows (gw's CPU and RSS against the targets with the bare
 * process, the peers and the what-ifs as baselines; pick-ups; where idle time goes) and the JSON line.
 */

import type { MachineLoad } from "../lib/machine.ts";
import { plainRow, report, type SummaryRow } from "../lib/report.ts";
import type { TraceSummary } from "../lib/strace.ts";
import { IDLE_S, PICKUPS, SAMPLE_S, SETTLE_S, STRACE_S, TARGET, WEBHOOKS } from "./settings.ts";
import type { ProcResult } from "./window.ts";

export interface IdleRun {
  procs: ProcResult[];
  machine: MachineLoad | null;
  traces: Record<string, TraceSummary | string>;
  pickups: Record<string, (number | null)[]>;
  skipped: Record<string, string>;
}

const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "n/a");

/** The processes' table, then per gw and the bare process: threads, intervals and strace's sources. */
function lines(run: IdleRun): string[] {
  const { procs, machine, traces } = run;
  const out = [
    "",
    `idle ${IDLE_S} s after ${SETTLE_S} s settle; machine busy ${machine?.busyPctAllCores ?? "n/a"} % of all cores (load ${machine?.load1Start} → ${machine?.load1End})`,
    `  ${"process".padEnd(38)}${["cpu ms", "cpu %", "stat %", "RSS start", "end", "max", "KiB/min"].map((h) => h.padStart(11)).join("")}`,
    ...procs.map(
      (p) =>
        `  ${p.name.padEnd(38)}${[
          p.window.cpuMs,
          f3(p.window.cpuPct),
          f3(p.window.statCpuPct),
          p.rss.startMiB,
          p.rss.endMiB,
          p.rss.maxMiB,
          p.rss.slopeKiBPerMin,
        ]
          .map((x) => String(x).padStart(11))
          .join("")}`,
    ),
  ];
  for (const p of procs.filter((x) => x.role !== "peer")) {
    out.push(
      "",
      `${p.name}: CPU and runs on a CPU per second, by thread, over the window`,
      ...p.window.byThread.map(
        (t) =>
          `  ${`${t.name} (${t.threads})`.padEnd(28)} ${String(t.cpuMs).padStart(9)} ms ${String(t.runsPerS).padStart(7)}/s`,
      ),
      `  CPU % per ${SAMPLE_S} s from its start (settle | window): ${p.cpuPctSeries.slice(0, p.windowStartsAt).join(" ")} | ${p.cpuPctSeries.slice(p.windowStartsAt).join(" ")}`,
    );
    const tr = traces[p.name];
    if (typeof tr === "string") out.push(`  ${tr}`);
    else if (tr) {
      out.push(
        `  strace ${Math.round(tr.seconds)} s: event-loop wake-ups/s: timer ${tr.loopWakeupsPerS.timer}, I/O ${tr.loopWakeupsPerS.io}`,
        ...Object.entries(tr.sourcesPerS).map(([k, v]) => `    ${k}: ${v}/s`),
        `    threads created: ${tr.threadsCreated.length} (${[...new Set(tr.threadsCreated)].join(", ") || "none"})`,
      );
    }
  }
  out.push("", "pick-up after the window (ms from commit, per commit)");
  for (const [name, v] of Object.entries(run.pickups))
    out.push(`  ${name.padEnd(38)} ${v.map((x) => x ?? "none").join(", ")}`);
  for (const [name, why] of Object.entries(run.skipped)) out.push(`SKIPPED ${name}: ${why}`);
  return out;
}

/** The processes by role, and the baselines gw's rows are given. */
function roles(procs: readonly ProcResult[]) {
  const byName = new Map(procs.map((p) => [p.name, p]));
  const bareP = byName.get("bare Bun process");
  const peers = procs.filter((p) => p.role === "peer");
  const whatIfs = procs.filter((p) => p.role === "whatif");
  const floorAndPeers = [bareP, ...peers].filter((p): p is ProcResult => p !== undefined);
  return {
    byName,
    gws: [byName.get("gw serve"), byName.get("gw serve (webhooks on)")],
    bareP,
    peers,
    whatIfs,
    cpuBase: floorAndPeers.map((p) => `${p.name} ${f3(p.window.cpuPct)} %`).join("; "),
    rssBase: floorAndPeers
      .map((p) => `${p.name} ${p.rss.startMiB} → ${p.rss.endMiB} MiB (${p.rss.slopeKiBPerMin} KiB/min)`)
      .join("; "),
    whatIfBase: whatIfs.map((p) => `${p.name} ${f3(p.window.cpuPct)} %`).join("; "),
  };
}

type Roles = ReturnType<typeof roles>;

/** Each gw's CPU and RSS against the targets. */
function gwRows(r: Roles): SummaryRow[] {
  const out: SummaryRow[] = [];
  for (const p of r.gws) {
    if (!p) continue;
    out.push({
      figure: `${p.name}, idle ${IDLE_S} s: CPU % of one core (all threads, schedstat; ratio ÷ bare Bun)`,
      value: `${f3(p.window.cpuPct)} % (${p.window.cpuMs} ms; utime+stime ${f3(p.window.statCpuPct)} %)`,
      baseline: [r.cpuBase, r.whatIfBase].filter(Boolean).join("; "),
      ratio:
        r.bareP && r.bareP.window.cpuPct > 0
          ? Math.round((p.window.cpuPct / r.bareP.window.cpuPct) * 10) / 10
          : null,
      target: `≤ ${TARGET.cpuPct} % of a core`,
      pass: p.window.cpuPct <= TARGET.cpuPct,
    });
    const growth = Math.max(p.rss.growthKiB, (p.rss.slopeKiBPerMin * IDLE_S) / 60);
    out.push(
      plainRow(
        `${p.name}, idle ${IDLE_S} s: RSS start → end (max; least-squares slope)`,
        `${p.rss.startMiB} → ${p.rss.endMiB} MiB (max ${p.rss.maxMiB}; ${p.rss.slopeKiBPerMin} KiB/min)`,
        `flat: end − start and slope × window ≤ ${TARGET.rssGrowthKiB} KiB`,
        growth <= TARGET.rssGrowthKiB,
        r.rssBase,
      ),
    );
  }
  return out;
}

/** Every watcher's pick-ups (gw's against the target), the others' figures, the skip, where time goes. */
function otherRows(run: IdleRun, r: Roles): SummaryRow[] {
  const out: SummaryRow[] = [];
  for (const [name, v] of Object.entries(run.pickups)) {
    const p = r.byName.get(name);
    const got = v.filter((x): x is number => x !== null);
    const max = got.length > 0 ? Math.max(...got) : Number.NaN;
    out.push(
      plainRow(
        `after ${IDLE_S} s idle: ${name} picks up a new message (max of ${PICKUPS} commits)`,
        `${got.length === v.length ? `${Math.round(max * 10) / 10} ms` : `${v.length - got.length} of ${v.length} missed`} (${v.map((x) => x ?? "none").join(", ")})`,
        p?.role === "gw" ? `all picked up, ≤ ${TARGET.pickupMs} ms (notifications working)` : "",
        p?.role === "gw" ? got.length === v.length && max <= TARGET.pickupMs : null,
      ),
    );
  }
  for (const p of [...r.whatIfs, ...r.peers, r.bareP]) {
    if (!p) continue;
    out.push(
      plainRow(
        `${p.name}, idle ${IDLE_S} s: CPU % of one core; RSS`,
        `${f3(p.window.cpuPct)} %; ${p.rss.startMiB} → ${p.rss.endMiB} MiB (${p.rss.slopeKiBPerMin} KiB/min)`,
      ),
    );
  }
  const skip = run.skipped["Claude Code iMessage plugin"];
  if (skip) out.push(plainRow("Claude Code iMessage plugin", `skipped: ${skip}`));
  for (const p of r.gws) {
    const tr = p ? run.traces[p.name] : undefined;
    if (!p || !tr || typeof tr === "string") continue;
    const main = p.window.byThread.find((t) => t.name === "main (event loop)");
    const sources = Object.entries(tr.sourcesPerS)
      .slice(0, 4)
      .map(([k, v]) => `${k} ${v}/s`)
      .join("; ");
    out.push(
      plainRow(
        `${p.name}: where idle time goes (strace ${Math.round(tr.seconds)} s + schedstat)`,
        `event loop ${tr.loopWakeupsPerS.timer} timer + ${tr.loopWakeupsPerS.io} I/O wake-ups/s, ${main ? `${main.cpuMs} ms` : "?"} on the main thread; ${sources}`,
        "",
        null,
        r.bareP ? `bare: ${r.bareP.window.byThread.map((t) => `${t.name} ${t.cpuMs} ms`).join(", ")}` : "",
      ),
    );
  }
  return out;
}

export function reportIdle(startedAt: number, run: IdleRun): void {
  const r = roles(run.procs);
  report({
    bench: "idle",
    command: IDLE_S === 60 ? "bun run bench idle" : `BENCH_IDLE_S=${IDLE_S} bun run bench idle`,
    startedAt,
    lines: lines(run),
    summary: [...gwRows(r), ...otherRows(run, r)],
    results: {
      config: {
        idleS: IDLE_S,
        settleS: SETTLE_S,
        sampleS: SAMPLE_S,
        straceS: STRACE_S,
        pickups: PICKUPS,
        webhooks: WEBHOOKS,
      },
      processes: run.procs,
      traces: run.traces,
      pickupsMs: run.pickups,
      machineLoad: run.machine,
      skipped: run.skipped,
    },
  });
}
