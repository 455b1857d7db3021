/**
 * bench/load/load.ts's report of one attempt: the summary rows against reliability.md §8.1's targets
 * (request rate, p99, send p99, errors, RSS growth, WAL, drain, exactly-once), the human lines (routes,
 * per-second series, CPU) and the `results` object. main() in load.ts picks the quietest attempt.
 */
import { commas, plainRow, type SummaryRow } from "../lib/report.ts";
import { SEED } from "../lib/settings.ts";
import { dist, r1, r2 } from "../lib/stats.ts";
import type { RouteFigures } from "./agents.ts";
import type { auditInbound, auditSends, auditWebhooks, GwAudit } from "./audit.ts";
import type { Figures } from "./figures.ts";
import type { History } from "./history.ts";
import type { Drained, TimedLoad } from "./run.ts";
import {
  AGENTS,
  API_RPS,
  CHANNELS,
  CONTEXT,
  DC_CHANNELS,
  DRAIN_S,
  DURATION_S,
  IM_CHANNELS,
  INBOUND_RPS,
  LIMIT,
  PERIOD_MS,
  RATE_BURST,
  RATE_PER_CHANNEL,
  SEND_RPS,
  TARGET,
  WARMUP_S,
} from "./settings.ts";
import type { Inbound } from "./world.ts";

/** What one attempt observed, from the processes, the timed load and the audit. */
export interface Outcome {
  seeded: History;
  t: TimedLoad;
  prime: readonly Inbound[];
  inbound: readonly Inbound[];
  allowedInbound: readonly Inbound[];
  drained: Drained;
  audit: GwAudit;
  arrivals: { byId: Map<string, number>; dupes: number; bad: number };
  inboundAudit: ReturnType<typeof auditInbound>;
  webhookAudit: ReturnType<typeof auditWebhooks>;
  sends: ReturnType<typeof auditSends>;
  health: unknown;
}

export interface AttemptReport {
  summary: SummaryRow[];
  lines: string[];
  results: Record<string, unknown>;
  /** Other processes' CPU over the load, % of all cores (null off Linux). */
  otherPct: number | null;
}

const failed = (f: RouteFigures) => f.n - f.ok;
const row = plainRow;

/** Rate, latency (all, by route, in the quiet seconds), CPU and errors. */
function latencyRows(o: Outcome, f: Figures): SummaryRow[] {
  const { load } = o.t;
  const routeRow = (name: string, r: RouteFigures, target: string | null, limitMs: number | null) =>
    row(
      `${name}: p50 / p99 (${commas(r.n)} requests)`,
      `${r.latency.p50} / ${r.latency.p99} ms`,
      target ?? "",
      limitMs === null || r.n === 0 ? null : r.latency.p99 <= limitMs,
    );
  const { quietSeconds, quietLatency } = f.quiet;
  const errors = failed(load.overall);
  const statuses = Object.entries(load.overall.statuses).map(([s, n]) => `${s}: ${n}`);
  return [
    row(
      `requests/s in all (${AGENTS} agents' unread → context → mark_read, ${SEND_RPS} sends/s; planned ${commas(Math.round(API_RPS + SEND_RPS))})`,
      `${commas(Math.round(f.rps))} req/s`,
      `≥ ${TARGET.rps} req/s`,
      f.rps >= TARGET.rps,
    ),
    row(
      "all requests: p50 / p99",
      `${load.overall.latency.p50} / ${load.overall.latency.p99} ms`,
      `p99 ≤ ${TARGET.p99Ms} ms`,
      load.overall.latency.p99 <= TARGET.p99Ms,
    ),
    routeRow("agents' routes together (unread, context, mark_read)", load.reads, null, null),
    ...Object.entries(load.routes).map(([name, r]) =>
      name.startsWith("POST /messages/send")
        ? routeRow(name, r, `p99 ≤ ${TARGET.sendP99Ms} ms (L2)`, TARGET.sendP99Ms)
        : routeRow(name, r, null, null),
    ),
    row(
      `all requests, only the ${quietSeconds.length} of ${load.bySecond.length} seconds in which other processes used < 10% of the CPUs: p50 / p99`,
      `${quietLatency.p50} / ${quietLatency.p99} ms`,
      "",
      null,
    ),
    row(
      "CPU during the load (this VM is shared: other processes are other sessions' work)",
      `gw ${f.cpu.gwPctOfCore}% of a core, its stand-in processes ${f.cpu.standinsPctOfCore}%, load generator ${f.cpu.agentsPctOfCore}%; other processes ${f.cpu.otherPctOfAllCores}% of all CPUs`,
      "",
      null,
    ),
    row(
      "errors: non-2xx (429 included) + socket errors",
      `${errors} (${statuses.join(", ") || "no non-2xx"}; ${load.overall.socketErrors} socket)`,
      "0",
      errors === 0,
    ),
  ];
}

/** RSS, WAL, the drain and the exactly-once audits. */
function invariantRows(o: Outcome, f: Figures): SummaryRow[] {
  const { rss } = f;
  const { t, inboundAudit: ia, webhookAudit: wa, arrivals, drained, allowedInbound, inbound } = o;
  const sa = o.sends.sendAudit;
  return [
    row(
      `gw RSS growth after the ${WARMUP_S} s warm-up (median of 5 samples, start → end)`,
      `${rss.growthPct >= 0 ? "+" : ""}${rss.growthPct}% (${rss.base} → ${rss.end} MiB, peak ${rss.peak})`,
      `≤ ${TARGET.rssGrowthPct}%`,
      rss.growthPct <= TARGET.rssGrowthPct,
    ),
    row(
      "gw.db-wal at the end of the load (largest sampled)",
      `${t.walEndMiB} MiB (${r2(rss.walMax)})`,
      `≤ ${TARGET.walMiB} MiB`,
      t.walEndMiB <= TARGET.walMiB && rss.walMax <= TARGET.walMiB,
    ),
    row(
      `webhook queue drained (allowed inbound delivered; pending within ${DRAIN_S} s of the end)`,
      `${commas(wa.deliveredOnce)}/${commas(allowedInbound.length)} delivered, sink ${commas(arrivals.byId.size)}, ${drained.last.pending ?? "?"} pending, ${drained.ms} ms after the end`,
      `all, 0 pending, ≤ ${DRAIN_S} s`,
      drained.ok &&
        wa.deliveredOnce === allowedInbound.length &&
        wa.receivedBySink === allowedInbound.length &&
        arrivals.byId.size === allowedInbound.length &&
        arrivals.dupes === 0 &&
        arrivals.bad === 0 &&
        wa.forUnknownSenders === 0,
    ),
    row(
      `inbound stored exactly once (${commas(t.imPlan.length)} chat.db rows + ${commas(t.dcPlan.length)} MESSAGE_CREATEs + ${o.prime.length} primes)`,
      `${commas(ia.storedOnce)}/${commas(inbound.length)} (${ia.missing} missing, ${ia.duplicated} duplicated, ${ia.wrongStatus} wrong status)`,
      "all, once",
      ia.storedOnce === inbound.length && ia.wrongStatus === 0 && ia.unexpected === 0,
    ),
    row(
      "accepted sends posted exactly once on their platform and stored once",
      `${commas(sa.postedOnce)}/${commas(sa.accepted)} posted once, ${commas(sa.storedOnce)} stored once (${sa.notPosted} not posted, ${sa.postedTwice} twice; ${sa.refused} refused)`,
      "all, once",
      (sa.accepted > 0 || SEND_RPS === 0) &&
        sa.postedOnce === sa.accepted &&
        sa.storedOnce === sa.accepted &&
        sa.postedThoughRefused === 0 &&
        sa.outboundRows === sa.accepted,
    ),
  ];
}

/** The routes' table, the agents' loops, the iMessage send split and the per-second series. */
function lines(o: Outcome, f: Figures): string[] {
  const { load, samples } = o.t;
  const split = o.sends.imessageSplit;
  const { cpu } = f;
  const { quietImessageSends: qi } = f.quiet;
  const cells = (name: string, n: number, l: RouteFigures["latency"], failures: number) =>
    `  ${name.padEnd(32)} ${String(n).padStart(7)}  ${String(l.p50).padStart(7)}  ${String(l.p90).padStart(7)}  ${String(l.p99).padStart(7)}  ${String(l.max).padStart(8)}  ${failures}`;
  return [
    `load: ${DURATION_S} s, ${commas(load.overall.n)} requests (${commas(Math.round(f.rps))}/s), ${AGENTS} agents, ${CHANNELS} channels, ${SEND_RPS} sends/s, ${INBOUND_RPS} inbound/s`,
    `  ${"route".padEnd(32)} ${"n".padStart(7)}  ${"p50".padStart(7)}  ${"p90".padStart(7)}  ${"p99".padStart(7)}  ${"max".padStart(8)}  failed`,
    ...Object.entries(load.routes).map(([name, r]) => cells(name, r.n, r.latency, failed(r))),
    cells("all", load.overall.n, load.overall.latency, failed(load.overall)),
    `agent loops: ${commas(load.loops.n)}, empty pages ${commas(load.loops.emptyPages)}, late start p99 ${load.loops.lateMs.p99} ms (over a period: ${load.loops.lateOverPeriod}), messages marked read ${commas(load.loops.messagesRead)}`,
    `iMessage sends, request → stand-in running p50 / p99: ${split.toStandinMs.p50} / ${split.toStandinMs.p99} ms; stand-in running → answer: ${split.standinToAnswerMs.p50} / ${split.standinToAnswerMs.p99} ms (epoch ms of its log, ±1 ms)`,
    `iMessage sends begun in the quiet seconds: p50 / p99 ${qi.p50} / ${qi.p99} ms (${qi.n})`,
    `p99 per second (ms): ${f.quiet.perSecondP99.join(" ")}`,
    `other processes per second (% of all CPUs): ${f.quiet.otherBySecond.join(" ")}`,
    `gw CPU per second (% of a core): ${samples
      .slice(1)
      .map((x) => x.gwPct)
      .join(" ")}`,
    `RSS (MiB, per second): ${samples.map((s) => s.rssMiB).join(" ")}`,
    `WAL (MiB, per second): ${samples.map((s) => s.walMiB).join(" ")}`,
    `CPU (% of one core): gw ${cpu.gwPctOfCore}, stand-ins ${cpu.standinsPctOfCore}, agents ${cpu.agentsPctOfCore}, writer ${cpu.writerPctOfCore}, sink ${cpu.sinkPctOfCore}, this script ${cpu.benchPctOfCore}; machine ${cpu.machineBusyPctOfAllCores}% of all cores busy, other processes ${cpu.otherPctOfAllCores}%`,
    ...(load.errorSamples.length > 0 ? ["error samples:", ...load.errorSamples.map((e) => `  ${e}`)] : []),
  ];
}

const settings = () => ({
  durationS: DURATION_S,
  warmupS: WARMUP_S,
  agents: AGENTS,
  agentPeriodMs: r2(PERIOD_MS),
  plannedApiRps: API_RPS,
  pageLimit: LIMIT,
  context: CONTEXT,
  channels: { imessage: IM_CHANNELS, discord: DC_CHANNELS },
  sendRps: SEND_RPS,
  rateLimit: { perChannelRps: RATE_PER_CHANNEL, burst: RATE_BURST },
  inboundRps: INBOUND_RPS,
  drainS: DRAIN_S,
  seed: SEED,
});

function results(o: Outcome, f: Figures): Record<string, unknown> {
  const { t } = o;
  const { load } = t;
  const q = f.quiet;
  return {
    settings: settings(),
    history: o.seeded,
    quietWaitS: t.waitedS,
    machineLoad: t.machineLoad,
    wallS: r2(f.wallS),
    requestsPerS: r1(f.rps),
    routes: load.routes,
    overall: load.overall,
    reads: load.reads,
    perSecond: load.perSecond,
    perSecondP99: q.perSecondP99,
    otherPctBySecond: q.otherBySecond,
    quiet: { seconds: q.quietSeconds.length, latency: q.quietLatency, imessageSends: q.quietImessageSends },
    loops: load.loops,
    inboundLate: { discord: dist(t.discordLate), imessage: t.writerLateMs },
    samples: t.samples,
    rss: {
      baseMiB: f.rss.base,
      endMiB: f.rss.end,
      peakMiB: f.rss.peak,
      growthPct: f.rss.growthPct,
      slopeMiBPerMin: r2(f.rss.slope),
    },
    wal: { endMiB: t.walEndMiB, maxMiB: r2(f.rss.walMax) },
    drain: o.drained,
    inbound: o.inboundAudit,
    webhooks: o.webhookAudit,
    sends: o.sends.sendAudit,
    imessageSendSplit: o.sends.imessageSplit,
    cpu: f.cpu,
    store: o.audit.counts,
    connectorsAtEnd: o.health,
    errorSamples: load.errorSamples,
  };
}

export function attemptReport(o: Outcome, f: Figures): AttemptReport {
  return {
    summary: [...latencyRows(o, f), ...invariantRows(o, f)],
    lines: lines(o, f),
    otherPct: f.cpu.otherPctOfAllCores,
    results: results(o, f),
  };
}
