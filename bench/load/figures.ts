/**
 * bench/load/load.ts's figures from one attempt's samples and CPU readings: RSS growth after the warm-up
 * (median of 5 samples at each end, lib/stats.ts's median) and its slope, the WAL's largest size, every
 * process's share of the CPU over the load and the other processes' share, and the quiet seconds (other
 * processes under 10% of the CPUs) with the latency of the requests completed in them.
 */
import { slope } from "../lib/proc.ts";
import { dist, median, r1, r2 } from "../lib/stats.ts";
import type { TimedLoad } from "./run.ts";
import type { CpuSnapshot, Sample } from "./sampler.ts";
import { DURATION_S, WARMUP_S } from "./settings.ts";

/** gw's RSS after the warm-up, and the WAL. */
export function rssFigures(samples: readonly Sample[], walEndMiB: number) {
  const after = samples.filter((s) => s.t >= WARMUP_S);
  const base = median(after.slice(0, 5).map((s) => s.rssMiB));
  const end = median(samples.slice(-5).map((s) => s.rssMiB));
  const peak = Math.max(...after.map((s) => s.rssMiB));
  const growthPct = r1((end / base - 1) * 100);
  const rssSlope = slope(after.map((s) => [s.t / 60, s.rssMiB] as [number, number]));
  const walMax = Math.max(...samples.map((s) => s.walMiB), walEndMiB);
  return { base, end, peak, growthPct, slope: rssSlope, walMax };
}

type Cpu = { self: number; children: number } | null;
const cpuOf = (a: Cpu, b: Cpu) =>
  a && b ? { self: b.self - a.self, children: b.children - a.children } : null;

/** Each process's share of a core over the load, the machine's, and the other processes' share of all cores. */
export function cpuFigures(cpu0: CpuSnapshot, cpu1: CpuSnapshot) {
  const windowMs = cpu1.at - cpu0.at;
  const share = (ms: number) => r1((ms / windowMs) * 100);
  const gwCpu = cpuOf(cpu0.gw, cpu1.gw);
  const ours =
    (gwCpu ? gwCpu.self + gwCpu.children : 0) +
    (cpuOf(cpu0.agents, cpu1.agents)?.self ?? 0) +
    (cpuOf(cpu0.writer, cpu1.writer)?.self ?? 0) +
    (cpuOf(cpu0.sink, cpu1.sink)?.self ?? 0) +
    (cpu1.self.user + cpu1.self.system) / 1000;
  const machineMs = cpu0.machine !== null && cpu1.machine !== null ? cpu1.machine - cpu0.machine : null;
  return {
    windowS: r2(windowMs / 1000),
    gwPctOfCore: gwCpu ? share(gwCpu.self) : null,
    standinsPctOfCore: gwCpu ? share(gwCpu.children) : null,
    agentsPctOfCore: share(cpuOf(cpu0.agents, cpu1.agents)?.self ?? 0),
    writerPctOfCore: share(cpuOf(cpu0.writer, cpu1.writer)?.self ?? 0),
    sinkPctOfCore: share(cpuOf(cpu0.sink, cpu1.sink)?.self ?? 0),
    benchPctOfCore: share((cpu1.self.user + cpu1.self.system) / 1000),
    machineBusyPctOfAllCores:
      machineMs === null ? null : r1((machineMs / windowMs / navigator.hardwareConcurrency) * 100),
    otherPctOfAllCores:
      machineMs === null ? null : r1(((machineMs - ours) / windowMs / navigator.hardwareConcurrency) * 100),
  };
}

/**
 * Seconds in which other processes (not this benchmark's) used under 10% of the CPUs: bySecond[k] holds
 * the requests completed in [k, k + 1) s, samples[k + 1] the CPU over the same second.
 */
export function quietFigures(t: TimedLoad) {
  const { load, samples, spec } = t;
  const perSecondP99 = load.bySecond.map((xs) => dist(xs ?? []).p99);
  const otherBySecond = load.bySecond.map((_, k) => samples[k + 1]?.otherPct ?? null);
  const quietSeconds = otherBySecond.flatMap((o, k) => (o !== null && o < 10 ? [k] : []));
  const quietLatency = dist(quietSeconds.flatMap((k) => load.bySecond[k] ?? []));
  const quietSet = new Set(quietSeconds);
  /** iMessage sends that began in a quiet second (the stand-in's start-up is CPU-bound). */
  const quietImessageSends = dist(
    load.sends
      .filter(
        ([, channel, , status, , , startAt]) =>
          status === 200 &&
          !channel.startsWith("community_chat:") &&
          quietSet.has(Math.floor((startAt - spec.t0) / 1000)),
      )
      .map((x) => x[4]),
  );
  return { perSecondP99, otherBySecond, quietSeconds, quietLatency, quietImessageSends };
}

/** Everything the summary, the lines and the results are made of. */
export function figures(t: TimedLoad) {
  return {
    wallS: (t.tLoadDone - t.t0) / 1000,
    rps: t.load.overall.n / DURATION_S,
    rss: rssFigures(t.samples, t.walEndMiB),
    cpu: cpuFigures(t.cpu0, t.cpu1),
    quiet: quietFigures(t),
  };
}

export type Figures = ReturnType<typeof figures>;
