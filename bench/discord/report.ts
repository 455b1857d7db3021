/**
 * bench/discord/discord.ts's report: the latency table (n, p50, p95, p99, max, mean of each stamp from the post,
 * and its p50 minus the raw messageCreate's), the per-sample differences, the catch-up runs and their
 * medians with the gw / raw ratios; then the verdict rows and the JSON line through lib/report.ts.
 */

import { type DistRow, distTable, type Machine, report, type SummaryRow } from "../lib/report.ts";
import { SEED } from "../lib/settings.ts";
import type { TailDist as Dist } from "../lib/stats.ts";
import { r2 } from "../lib/stats.ts";
import type { CatchupResult } from "./catchup.ts";
import type { LatencyResult } from "./latency.ts";
import { CHANNELS, PER_CHANNEL, RUNS, SAMPLES, STEP_MS, WARMUP } from "./settings.ts";

export interface DiscordResults {
  latency?: LatencyResult;
  catchup?: CatchupResult;
}

const COLS = ["n", "p50", "p95", "p99", "max", "mean"] as const;

function latencyLines(lat: LatencyResult): string[] {
  // Each stamp's p50 next to the raw messageCreate's.
  const vsRaw = (label: string, d: Dist): DistRow => [label, d, String(r2(d.p50 - lat.rawEvent.p50))];
  return [
    "",
    ...distTable(
      "MESSAGE_CREATE posted -> (ms)",
      COLS,
      [
        vsRaw("raw discord.js: dispatch on client.ws", lat.rawDispatch),
        vsRaw("raw discord.js: messageCreate (baseline)", lat.rawEvent),
        ...(lat.rawStored.n > 0 ? [vsRaw("raw: + one-row bun:sqlite commit", lat.rawStored)] : []),
        vsRaw("gw: dispatch on client.ws (in gw)", lat.gwDispatch),
        vsRaw("gw: ingest committed (in gw)", lat.gwCommit),
        vsRaw("gw: listed in GET /messages/unread", lat.gwUnread),
        vsRaw("gw: signed webhook received at the sink", lat.gwWebhook),
      ],
      { lastHead: "p50 - raw" },
    ),
    "",
    ...distTable("per-sample differences (ms)", COLS, [
      ["gw listed - raw messageCreate", lat.pairedUnreadMinusRaw],
      ["gw commit - gw dispatch (gw's own work)", lat.pairedCommitMinusGwDispatch],
      ["  gw dispatch -> ingest call (sync + queue)", lat.pairedIngestBeginMinusGwDispatch],
      ["  ingest call -> transaction returned", lat.pairedCommitMinusIngestBegin],
      ["raw messageCreate - raw dispatch", lat.pairedRawEventMinusRawDispatch],
      ["gw dispatch - raw dispatch", lat.pairedGwDispatchMinusRawDispatch],
    ]),
    "",
    ...distTable("other", COLS, [
      ["fake.message() call (both sockets)", lat.post],
      ["unread polls per sample", lat.pollsPerSample],
      ["HTTP round trip, idle unread poll", lat.httpRtt],
    ]),
    `  listed by the first poll: ${lat.firstPollHits}/${lat.gwUnread.n}; gw's session served first: ${lat.gwFirstPerSession}/${lat.gwUnread.n}; webhooks ${lat.webhooks.received}/${lat.webhooks.expected} (dupes ${lat.webhooks.dupes}, bad ${lat.webhooks.badSignatures}); missing ${JSON.stringify(lat.missing)}`,
    `  clock offsets (ms): gw ${lat.offsets.gw?.ms} ± ${lat.offsets.gw?.errMs}, raw ${lat.offsets.raw?.ms} ± ${lat.offsets.raw?.errMs}, sink ${lat.offsets.sink?.ms} ± ${lat.offsets.sink?.errMs}; ${lat.wallS} s`,
  ];
}

function catchupLines(cu: CatchupResult): string[] {
  const widths = [12, 12, 12, 14, 10, 10, 8, 10, 8, 13];
  const runRow = (x: CatchupResult["runs"][number]) => {
    const cells = [
      x.spawnToAll,
      x.startToAll,
      x.readyToAll,
      x.firstRequestToAll,
      x.requestSpan,
      x.historyRequests,
      x.stored,
      x.storeMs,
      x.loggedMs ?? "",
      x.boundWarnings ?? "",
    ];
    return `  ${`${x.kind} #${x.round + 1}`.padEnd(18)}${cells.map((v, i) => String(v).padStart(widths[i] ?? 10)).join("")}`;
  };
  type S = CatchupResult["gw"];
  const line = (name: string, s: S) =>
    `  ${name.padEnd(34)} start->all ${s.startToAll} ms = ${s.perSFromStart} msg/s; 1st request->all ${s.firstRequestToAll} ms = ${s.perSFromFirstRequest} msg/s; spawn->all ${s.spawnToAll} ms; store ${s.storeMs} ms`;
  const ratio = (a: S, b: S, k: "perSFromStart" | "perSFromFirstRequest") => (a[k] / b[k]).toFixed(2);
  return [
    "",
    `catch-up of ${cu.messages} messages (${CHANNELS} channels × ${PER_CHANNEL}; posted in ${cu.postMs} ms), ms`,
    "  run                 spawn->all  start->all  ready->all  1st req->all  req span  requests  stored  store ms  logged  bound warns",
    ...cu.runs.map(runRow),
    `medians of ${RUNS}:`,
    line("gw", cu.gw),
    line("raw discord.js REST + bun:sqlite", cu.raw),
    `  gw / raw: ${ratio(cu.gw, cu.raw, "perSFromStart")}x from start, ${ratio(cu.gw, cu.raw, "perSFromFirstRequest")}x from the first request`,
    line("gw, pacing lifted (1)", cu.gwUnpaced),
    line("raw, pacing lifted", cu.rawUnpaced),
    `  gw / raw, pacing lifted: ${ratio(cu.gwUnpaced, cu.rawUnpaced, "perSFromFirstRequest")}x from the first request`,
    "  (1) discord.js is imported before start() there, so its start->all leaves out the import",
  ];
}

export function reportDiscord(
  startedAt: number,
  machine: Machine,
  totalS: number,
  results: DiscordResults,
  verdicts: SummaryRow[],
): void {
  const lines = [
    `discord bench @ ${machine.revision}: ${machine.cpus} cpus (${machine.cpuModel}), bun ${machine.bun}, ${totalS} s`,
    ...(results.latency ? latencyLines(results.latency) : []),
    ...(results.catchup ? catchupLines(results.catchup) : []),
  ];
  report({
    bench: "discord",
    command: "bun run bench discord",
    startedAt,
    summary: verdicts,
    lines,
    results: {
      config: {
        samples: SAMPLES,
        warmup: WARMUP,
        stepMs: STEP_MS,
        seed: SEED,
        channels: CHANNELS,
        perChannel: PER_CHANNEL,
        catchupRuns: RUNS,
      },
      ...results,
    },
  });
}
