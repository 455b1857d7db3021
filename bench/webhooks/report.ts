/**
 * bench/webhooks/webhooks.ts's figures and report: the median gw and raw round rates (lib/stats.ts's median),
 * the slowest gw round, the delivery rows' outcomes (per gw round, and every row of the run), the hyper-
 * visor's steal over the run; the latency, throughput and breakdown tables, the two summary rows against
 * the targets (p50 stored → received, sustained deliveries/s) and the JSON line (lib/report.ts).
 */
import { cpuJiffies, stealShare } from "../lib/machine.ts";
import { distTable, report, type SummaryRow } from "../lib/report.ts";
import { median, r1, r2 } from "../lib/stats.ts";
import type { Bench } from "./gw.ts";
import type { LatencyResult } from "./latency.ts";
import {
  BATCH,
  CHANNELS,
  CONCURRENCY,
  type Dist,
  GAP_MS,
  MESSAGES,
  ROUNDS,
  SAMPLES,
  TARGET_P50_MS,
  TARGET_RATE,
} from "./settings.ts";
import type { Breakdown, ThroughputRound } from "./throughput.ts";

export interface WebhooksRun {
  startedAt: number;
  /** /proc/stat when the run began, for the steal share. */
  stat0: number[] | null;
  machine: { nproc: number; cpu: string; bun: string; platform: string; tmpdir: string };
  clock0: { offsetMs: number; rttMs: number };
  clock1: { offsetMs: number; rttMs: number };
  lat: LatencyResult;
  rounds: ThroughputRound[];
  prof: Breakdown | null;
}

/** Rates of the rounds, outcomes of the delivery rows, steal. */
function figures(b: Bench, run: WebhooksRun) {
  const gwRounds = run.rounds.filter((r) => r.kind === "gw");
  const rawRounds = run.rounds.filter((r) => r.kind === "raw");
  const gwRate = median(gwRounds.map((r) => r.rate));
  const rawRate = median(rawRounds.map((r) => r.rate));
  const gwMin = Math.min(...gwRounds.map((r) => r.rate));
  const steal = stealShare(run.stat0, cpuJiffies());
  const gwOutcomes: Record<string, number> = {};
  for (const r of gwRounds)
    for (const [k, v] of Object.entries(r.outcomes)) gwOutcomes[k] = (gwOutcomes[k] ?? 0) + v;
  const delivered = gwOutcomes["delivered/1/204"] ?? 0;
  const gwTotal = gwRounds.reduce((a, r) => a + r.n, 0);
  /** Every delivery row of the run (warm-up, latency, rounds, breakdown): status/attempts/last code. */
  const allRows: Record<string, number> = {};
  for (const r of b.gw.service.store.db
    .query<{ k: string; n: number }, []>(
      "SELECT status || '/' || attempt_count || '/' || COALESCE(last_code, last_error) AS k, COUNT(*) AS n FROM webhook_deliveries GROUP BY k",
    )
    .all())
    allRows[r.k] = r.n;
  const latencyPass = run.lat.gwFromStored.p50 <= TARGET_P50_MS;
  const ratePass = gwRate >= TARGET_RATE;
  const warnings = b.gw.warnings();
  return {
    gwRounds,
    gwRate,
    rawRate,
    gwMin,
    steal,
    gwOutcomes,
    delivered,
    gwTotal,
    allRows,
    latencyPass,
    ratePass,
    warnings,
  };
}

type Figures = ReturnType<typeof figures>;

function latencyLines(run: WebhooksRun, f: Figures): string[] {
  const { machine, lat } = run;
  return [
    `\nMachine: ${machine.nproc} CPUs (${machine.cpu}), bun ${machine.bun}, ${machine.platform}; CPU steal during the run ${f.steal === null ? "n/a" : `${(f.steal * 100).toFixed(1)} %`}`,
    `\nLatency, ms (${SAMPLES} samples each; cross-process wall clock, offset ${run.clock0.offsetMs.toFixed(3)} ms corrected)`,
    ...distTable(
      "",
      ["p50", "p90", "p99", "max", "mean"],
      [
        ["gw   stored (ingest returned) -> sink", lat.gwFromStored],
        ["gw   ingest called -> sink", lat.gwFromCall],
        ["raw  sign + fetch called -> sink", lat.raw],
        ["  gw ingest call (1 message, commit)", lat.gwIngest],
        ["  gw stored -> dispatcher calls fetch", lat.gwStoredToFetch],
        ["  gw fetch called -> sink", lat.gwFetchToArrival],
      ],
      { format: (x) => x.toFixed(2) },
    ),
    `  body bytes: gw ${lat.gwBytes.toFixed(0)}, raw ${lat.rawBytes.toFixed(0)}`,
  ];
}

function throughputLines(run: WebhooksRun, f: Figures): string[] {
  const { lat, prof } = run;
  const out = [
    `\nThroughput (${MESSAGES} deliveries per round, ${CHANNELS} channels, batches of ${BATCH}, concurrency ${CONCURRENCY})`,
    `${"round".padEnd(10)}${"deliv/s".padStart(9)}${"wall ms".padStart(9)}${"sink/s".padStart(9)}${"ingest ms".padStart(10)}${"cpu us/d".padStart(10)}${"sink us/d".padStart(10)}  outcomes`,
    ...run.rounds.map(
      (r, i) =>
        `${`${r.kind} #${Math.floor(i / 2) + 1}`.padEnd(10)}${r.rate.toFixed(0).padStart(9)}${r.wallMs.toFixed(0).padStart(9)}${r.sinkRate.toFixed(0).padStart(9)}${(r.kind === "gw" ? r.ingestMs.toFixed(0) : "-").padStart(10)}${r.cpuUsPerDelivery.toFixed(0).padStart(10)}${r.sinkCpuUsPerDelivery.toFixed(0).padStart(10)}  ${JSON.stringify(r.outcomes)}${r.dupes || r.bad ? ` dupes=${r.dupes} bad=${r.bad}` : ""}`,
    ),
  ];
  if (prof) {
    out.push(
      `\nBreakdown round (gw, ${prof.deliveries} deliveries, store calls timed; not used for the figures)`,
    );
    for (const [k, v] of Object.entries(prof.perDeliveryMs))
      out.push(
        `  ${k.padEnd(42)}${v.toFixed(3).padStart(9)} ms/delivery${prof.calls[k] !== undefined ? `  (${prof.calls[k]} calls)` : ""}`,
      );
  }
  out.push(
    "\nTargets",
    `  p50 stored -> received <= ${TARGET_P50_MS} ms: ${lat.gwFromStored.p50.toFixed(2)} ms (raw ${lat.raw.p50.toFixed(2)} ms)  ${f.latencyPass ? "PASS" : "FAIL"}`,
    `  sustained >= ${TARGET_RATE} deliveries/s: ${f.gwRate.toFixed(0)}/s median of ${f.gwRounds.length} (raw ${f.rawRate.toFixed(0)}/s); slowest gw round ${f.gwMin.toFixed(0)}/s  ${f.ratePass ? "PASS" : "FAIL"}`,
    `  throughput rounds delivered on the first attempt with 204: ${f.delivered}/${f.gwTotal}; all rows of the run (status/attempts/code): ${JSON.stringify(f.allRows)}; gw warnings/errors logged: ${f.warnings}`,
  );
  return out;
}

function summary(run: WebhooksRun, f: Figures): SummaryRow[] {
  const { lat } = run;
  return [
    {
      figure: "message stored → signed webhook received, p50 (p99)",
      value: `${r2(lat.gwFromStored.p50)} (${r2(lat.gwFromStored.p99)}) ms`,
      baseline: `raw sign + fetch → received: ${r2(lat.raw.p50)} (${r2(lat.raw.p99)}) ms`,
      ratio: null,
      target: `p50 ≤ ${TARGET_P50_MS} ms`,
      pass: f.latencyPass,
    },
    {
      figure: `sustained deliveries (${MESSAGES} per round, median of ${f.gwRounds.length} rounds)`,
      value: `${r1(f.gwRate)}/s`,
      baseline: `raw loop of ${CONCURRENCY} concurrent fetches: ${r1(f.rawRate)}/s`,
      ratio: Math.round((f.gwRate / f.rawRate) * 100) / 100,
      target: `≥ ${TARGET_RATE}/s`,
      pass: f.ratePass,
    },
  ];
}

const round3 = (d: Dist) => ({
  n: d.n,
  p50: r2(d.p50),
  p90: r2(d.p90),
  p99: r2(d.p99),
  max: r2(d.max),
  mean: r2(d.mean),
});

function results(run: WebhooksRun, f: Figures) {
  const { lat, clock0, clock1, prof } = run;
  return {
    cpuStealShare: f.steal === null ? null : r2(f.steal),
    params: {
      samples: SAMPLES,
      gapMs: GAP_MS,
      messages: MESSAGES,
      channels: CHANNELS,
      batch: BATCH,
      rounds: ROUNDS,
      concurrency: CONCURRENCY,
    },
    clock: {
      offsetStartUs: r1(clock0.offsetMs * 1000),
      offsetEndUs: r1(clock1.offsetMs * 1000),
      rttUs: r1(clock0.rttMs * 1000),
    },
    latencyMs: {
      gwStoredToSink: round3(lat.gwFromStored),
      gwIngestCallToSink: round3(lat.gwFromCall),
      raw: round3(lat.raw),
      gwIngestCall: round3(lat.gwIngest),
      gwStoredToFetch: round3(lat.gwStoredToFetch),
      gwFetchToSink: round3(lat.gwFetchToArrival),
    },
    throughput: {
      gwRate: r1(f.gwRate),
      gwSlowestRound: r1(f.gwMin),
      rawRate: r1(f.rawRate),
      rounds: run.rounds.map((r) => ({
        kind: r.kind,
        n: r.n,
        rate: r1(r.rate),
        wallMs: r1(r.wallMs),
        sinkRate: r1(r.sinkRate),
        ingestMs: r1(r.ingestMs),
        cpuUsPerDelivery: r1(r.cpuUsPerDelivery),
        sinkCpuUsPerDelivery: r1(r.sinkCpuUsPerDelivery),
        dupes: r.dupes,
        bad: r.bad,
        outcomes: r.outcomes,
      })),
    },
    breakdown: prof
      ? Object.fromEntries(Object.entries(prof.perDeliveryMs).map(([k, v]) => [k, r2(v * 1000) / 1000]))
      : null,
    delivered: {
      firstAttempt204: f.delivered,
      total: f.gwTotal,
      outcomes: f.gwOutcomes,
      allRows: f.allRows,
      warnings: f.warnings,
    },
    targets: {
      p50Ms: {
        target: TARGET_P50_MS,
        value: r2(lat.gwFromStored.p50),
        baseline: r2(lat.raw.p50),
        pass: f.latencyPass,
      },
      deliveriesPerS: { target: TARGET_RATE, value: r1(f.gwRate), baseline: r1(f.rawRate), pass: f.ratePass },
    },
  };
}

export function reportWebhooks(b: Bench, run: WebhooksRun): void {
  const f = figures(b, run);
  report({
    bench: "webhooks",
    command: "bun run bench webhooks",
    startedAt: run.startedAt,
    lines: [...latencyLines(run, f), ...throughputLines(run, f)],
    summary: summary(run, f),
    results: results(run, f),
  });
}
