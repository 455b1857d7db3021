/**
 * bench/events/events.ts's report: what was seeded, the table of GET /events cases (gw and the bare Bun.serve
 * over HTTP in ms, the in-process page in µs, and their ratios), the idle CPU of `gw serve` on the big
 * chat.db next to a bare Bun process; then the verdict rows (each case's gw p99 against the issue's 5 ms,
 * gw's idle CPU against 0.15 % of a core) and the JSON line, through lib/report.ts.
 */

import type { CaseResult } from "../lib/http-cases.ts";
import { caseTable } from "../lib/http-cases.ts";
import { plainRow, ratio, report, type SummaryRow, textTable } from "../lib/report.ts";
import type { IdleResult } from "./idle.ts";
import type { Seeded } from "./seed.ts";
import {
  BUDGET_IDLE_PCT,
  BUDGET_P99_MS,
  CHATDB_ROWS,
  EDITED_ROWS,
  EVENTS,
  IDLE_S,
  MESSAGES,
  QUIET_WAIT_S,
  RECENT_ROWS,
  REQUESTS,
  SETTLE_S,
  WARMUP,
} from "./settings.ts";

export interface EventsRun {
  tTotal: number;
  seeded: Seeded;
  cases: CaseResult[];
  idle: IdleResult | null;
}

const n = (x: number) => x.toLocaleString("en-US");
const f = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

function idleLines(i: IdleResult | null): string[] {
  if (!i) return ["idle part skipped (BENCH_CHATDB_ROWS=0)"];
  return [
    `idle: gw serve on a chat.db of ${n(i.chatDbRows)} rows (${i.chatDbMiB} MiB; ${RECENT_ROWS} in the last 10 minutes, ` +
      `${i.editEvents} of them edited and stored as events by the re-check), ${SETTLE_S} s settle, ${IDLE_S} s window, ` +
      `machine ${i.machine.busyPctAllCores ?? "-"} % busy (this run included):`,
    ...textTable(
      ["process", "CPU % of a core (schedstat)", "utime+stime %", "CPU ms"],
      [
        ["gw serve", String(i.gw.cpuPct), String(i.gw.statCpuPct), String(i.gw.cpuMs)],
        ["bare Bun process", String(i.bare.cpuPct), String(i.bare.statCpuPct), String(i.bare.cpuMs)],
      ],
    ),
    `  gw by thread: ${i.gw.byThread.map((t) => `${t.name} ${t.cpuMs} ms (${t.runsPerS} runs/s)`).join("; ")}`,
    `one more edit after the window: gw ${i.oneChangeMs} ms of CPU above its idle rate (event ${i.oneChangeSeen ? "seen" : "NOT seen"} on GET /events)`,
  ];
}

function lines(r: EventsRun): string[] {
  const s = r.seeded;
  return [
    `gw events benchmark: ${n(s.events)} events (${n(s.visible)} visible) on ${n(s.messages)} messages, ` +
      `db ${f(s.dbBytes / 2 ** 20)} MiB, seeded through createIngest in ${n(s.seedMs)} ms; ${JSON.stringify(s.byKind)}`,
    "",
    `GET /events, sequential, ${REQUESTS} timed requests per case and target after ${WARMUP} untimed:`,
    ...caseTable(r.cases),
    "",
    ...idleLines(r.idle),
  ];
}

function summary(r: EventsRun): SummaryRow[] {
  const rows: SummaryRow[] = r.cases.map((c) => ({
    figure: `GET /events ${c.name}, p50 / p99 (ratio: p99 gw / raw)`,
    value: `${f(c.gw.p50)} / ${f(c.gw.p99)} ms`,
    baseline: `bare Bun.serve + bun:sqlite ${f(c.raw.p50)} / ${f(c.raw.p99)} ms; store.events.visibleAfter ${f(c.page.p50)} / ${f(c.page.p99)} µs`,
    ratio: ratio(c.gw.p99, c.raw.p99),
    target: `p99 ≤ ${BUDGET_P99_MS} ms`,
    pass: c.gw.p99 <= BUDGET_P99_MS,
  }));
  const i = r.idle;
  if (i) {
    rows.push(
      {
        figure: `gw serve idle CPU, iMessage edit re-check on a ${n(i.chatDbRows)}-row chat.db, % of one core over ${IDLE_S} s`,
        value: `${i.gw.cpuPct} %`,
        baseline: `bare Bun process ${i.bare.cpuPct} %`,
        ratio: null,
        target: `≤ ${BUDGET_IDLE_PCT} %`,
        pass: i.gw.cpuPct <= BUDGET_IDLE_PCT,
      },
      plainRow(
        "edits found by the re-check and stored as events (before the window)",
        `${i.editEvents} of ${EDITED_ROWS}`,
        `${EDITED_ROWS}`,
        i.editEvents === EDITED_ROWS,
      ),
      plainRow("one chat.db edit after the window: gw CPU above its idle rate", `${i.oneChangeMs} ms`),
    );
  }
  rows.push(
    plainRow(
      `seed (${n(MESSAGES)} messages, ${n(EVENTS)} events through ingest)`,
      `${f(r.seeded.seedMs / 1000)} s`,
    ),
  );
  return rows;
}

export function reportEvents(r: EventsRun): void {
  report({
    bench: "events",
    command: "bun run bench events",
    startedAt: r.tTotal,
    summary: summary(r),
    lines: lines(r),
    results: {
      settings: {
        EVENTS,
        MESSAGES,
        REQUESTS,
        WARMUP,
        QUIET_WAIT_S,
        CHATDB_ROWS,
        RECENT_ROWS,
        EDITED_ROWS,
        IDLE_S,
        SETTLE_S,
      },
      seed: { ...r.seeded, cursors: undefined },
      cases: r.cases,
      idle: r.idle,
    },
  });
}
