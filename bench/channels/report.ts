/**
 * bench/channels/channels.ts's report: what was seeded, the correctness check, the table of cases (gw and the bare
 * Bun.serve over HTTP in ms, the in-process page in µs, and their ratios), the concurrent run, what the
 * channel-list upkeep costs ingest and the page's query plans; then the verdict rows (each case's gw p99 against the issue's
 * 10 ms budget) and the JSON line, through lib/report.ts.
 */

import { caseTable } from "../lib/http-cases.ts";
import { plainRow, ratio, report, type SummaryRow, textTable } from "../lib/report.ts";
import { SEED } from "../lib/settings.ts";
import { INGEST_ROWS, ROWS } from "../store/settings.ts";
import type { CheckResult, pagePlans, storeStats } from "./check.ts";
import type { CaseResult, ConcurrentResult } from "./http.ts";
import type { SeededChannels } from "./seed.ts";
import {
  BUDGET_P99_MS,
  CHANNELS,
  CONNECTIONS,
  QUIET_WAIT_S,
  REQUESTS,
  UPKEEP_ROWS,
  WARMUP,
} from "./settings.ts";
import type { UpkeepResult } from "./upkeep.ts";

export interface ChannelsRun {
  tTotal: number;
  seeded: SeededChannels;
  stats: ReturnType<typeof storeStats>;
  check: CheckResult;
  plans: ReturnType<typeof pagePlans>;
  http: { cases: CaseResult[]; concurrent: ConcurrentResult };
  upkeep: UpkeepResult;
}

const n = (x: number) => x.toLocaleString("en-US");
const f = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

function lines(r: ChannelsRun): string[] {
  const { seeded: s, stats, check, http, upkeep: u } = r;
  const c = http.concurrent;
  return [
    `gw channels benchmark: ${n(ROWS)} messages over ${n(CHANNELS)} channels (Zipf s = 1), db ${f(stats.dbBytes / 2 ** 20)} MiB`,
    `messages ${JSON.stringify(stats.statuses)}; ${n(stats.channelsWithMessages)} channels with messages ` +
      `(per channel min ${stats.messagesPerChannel.min}, median ${stats.messagesPerChannel.median}, max ${n(stats.messagesPerChannel.max)}); ` +
      `channel_list ${n(stats.listRows)} rows (${n(stats.named)} named, ${check.phantomRows} not listed), channel_reads ${n(stats.readRows)} rows`,
    `read marks ${JSON.stringify(s.marks)}; unsends ${JSON.stringify(s.deletes)}; renames ${s.renames}`,
    `seed ${n(s.seedMs)} ms (names + messages ${n(s.messagesMs)}, read marks ${n(s.readsMs)}, unsends + renames ${n(s.deletesMs)})`,
    `check: ${check.listed} listed channels × ${Object.keys(check.compared).length} agents, unread_count = COUNT(*) for all, ` +
      `${check.mismatches} differences (${check.ms} ms); layout ${JSON.stringify(check.layout)}`,
    "",
    `GET /channels, sequential, ${REQUESTS} timed requests per case and target after ${WARMUP} untimed:`,
    ...caseTable(http.cases, { gwPerPage: true }),
    "",
    `${c.connections} connections, ${c.path} (${c.requests} requests each): gw ${n(c.gw.reqPerS)} req/s p50 ${c.gw.ms.p50} p99 ${c.gw.ms.p99} ms; ` +
      `raw ${n(c.raw.reqPerS)} req/s p50 ${c.raw.ms.p50} p99 ${c.raw.ms.p99} ms`,
    "",
    `channel-list upkeep: ${n(u.messages)} messages through createIngest in batches of ${u.batch}, ${u.perMessageUs} µs a message ` +
      `(${u.ratio}× the throughput without it; median of the ${u.withoutList.roundMs.length} rounds' ratios ${u.roundRatio}×; ` +
      `machine ${u.load.busyPctAllCores ?? "-"} % busy, this run included):`,
    ...textTable(
      [
        "store",
        "msg/s",
        "× without upkeep",
        "median round ×",
        "write calls / msg",
        "µs / msg",
        "list allowed +",
      ],
      [
        { arm: u.withList, rounds: u.roundRatio, check: u.check.withList },
        { arm: u.withoutList, rounds: 1, check: u.check.withoutList },
      ].map(({ arm, rounds, check }) => [
        arm.name,
        n(arm.perS),
        String(ratio(arm.perS, u.withoutList.perS)),
        String(rounds),
        String(arm.writesPerMessage ?? "-"),
        ((arm.ms / u.messages) * 1000).toFixed(1),
        n(check.listAllowedAdded),
      ]),
    ),
    "",
    "plans:",
    ...Object.entries(r.plans).map(([k, v]) => `  ${k}: ${v.join(" | ")}`),
  ];
}

function summary(r: ChannelsRun): SummaryRow[] {
  const rows: SummaryRow[] = r.http.cases.map((c) => ({
    figure: `GET /channels ${c.name}, p50 / p99 (ratio: p99 gw / raw)`,
    value: `${f(c.gw.p50)} / ${f(c.gw.p99)} ms`,
    baseline: `bare Bun.serve ${f(c.raw.p50)} / ${f(c.raw.p99)} ms; store.channelList.page ${f(c.page.p50)} / ${f(c.page.p99)} µs`,
    ratio: ratio(c.gw.p99, c.raw.p99),
    target: `p99 ≤ ${BUDGET_P99_MS} ms`,
    pass: c.gw.p99 <= BUDGET_P99_MS,
  }));
  const c = r.http.concurrent;
  rows.push({
    figure: `GET /channels at ${c.connections} connections, req/s (ratio: gw / raw)`,
    value: `${n(c.gw.reqPerS)} req/s, p99 ${f(c.gw.ms.p99)} ms`,
    baseline: `bare Bun.serve ${n(c.raw.reqPerS)} req/s, p99 ${f(c.raw.ms.p99)} ms`,
    ratio: ratio(c.gw.reqPerS, c.raw.reqPerS),
    target: "",
    pass: null,
  });
  const u = r.upkeep;
  rows.push(
    {
      figure:
        "ingest with the channel-list upkeep, 500-message batches, msg/s (ratio: openStore / the same store without the list's writes, median of rounds)",
      value: `${n(u.withList.perS)} msg/s (${u.perMessageUs} µs a message for the list)`,
      baseline: `channel-list upkeep taken out ${n(u.withoutList.perS)} msg/s`,
      ratio: u.roundRatio,
      target: "",
      pass: null,
    },
    plainRow(
      "unread_count = direct COUNT(*) for every listed channel and agent",
      `${n(r.check.listed)} channels × ${Object.keys(r.check.compared).length} agents, ${r.check.mismatches} differences`,
      "0 differences",
      r.check.mismatches === 0,
    ),
    plainRow("seed (1 M messages, names, read marks, unsends)", `${f(r.seeded.seedMs / 1000)} s`),
  );
  return rows;
}

export function reportChannels(r: ChannelsRun): void {
  report({
    bench: "channels",
    command: "bun run bench channels",
    startedAt: r.tTotal,
    summary: summary(r),
    lines: lines(r),
    results: {
      settings: {
        ROWS,
        CHANNELS,
        INGEST_ROWS,
        SEED,
        REQUESTS,
        WARMUP,
        CONNECTIONS,
        UPKEEP_ROWS,
        QUIET_WAIT_S,
      },
      stats: r.stats,
      seed: {
        ms: r.seeded.seedMs,
        messagesMs: r.seeded.messagesMs,
        readsMs: r.seeded.readsMs,
        deletesMs: r.seeded.deletesMs,
        named: r.seeded.named,
        phantoms: r.seeded.phantoms,
        marks: r.seeded.marks,
        deletes: r.seeded.deletes,
        renames: r.seeded.renames,
      },
      check: r.check,
      cases: r.http.cases,
      concurrent: r.http.concurrent,
      upkeep: r.upkeep,
      plans: r.plans,
    },
  });
}
