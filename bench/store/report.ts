/**
 * bench/store/store.ts's report: the table of every query (p50/p99/mean/max µs, rows returned, ratios
 * to the primary-key lookup), the query plans, the four summary rows (the worst unread case, context,
 * the worst quarantine page, markRead) and the JSON line, through lib/report.ts.
 */
import { cpus } from "node:os";
import { report, type SummaryRow, textTable } from "../lib/report.ts";
import { elapsed } from "../lib/settings.ts";
import type { Measured, Result } from "./measure.ts";
import type { Seeded } from "./seeded.ts";
import { INGEST_ROWS, ITERS, ROWS, UNREAD_A, WARMUP } from "./settings.ts";

function fmt(n: number): string {
  if (!Number.isFinite(n)) return "-";
  if (n >= 100) return n.toFixed(0);
  if (n >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/** The human lines: the run, the query table and the plans. */
function lines(s: Seeded, m: Measured, tTotal: number, machine: { cpu: string; nproc: number }): string[] {
  const base = m.results[0] as Result;
  const marks = s.marks;
  return [
    `gw store-queries benchmark — bun ${Bun.version}, sqlite ${m.sqlite}, ${machine.nproc} CPUs (${machine.cpu})`,
    `rows ${ROWS} (allowed ${m.counts.allowed ?? 0}, unknown ${m.counts.unknown ?? 0}, outbound ${m.counts.outbound ?? 0}); ` +
      `${m.channelSizes.length} channels (busiest ${m.busiest.n} rows); db ${(m.dbBytes / 2 ** 20).toFixed(0)} MiB`,
    `read marks: agent-a ${marks["agent-a"]} (${UNREAD_A} unread, scattered), agent-c ${marks["agent-c"]} (1 stale + ${UNREAD_A - 1} newest unread), agent-d ${marks["agent-d"]} (${UNREAD_A} newest unread), agent-b none`,
    `read runs: ${JSON.stringify(m.runs)}`,
    `seed ${s.seedMs} ms (ingest ${INGEST_ROWS} rows ${s.ingestMs} ms, insert ${ROWS - INGEST_ROWS} rows ${s.insertMs} ms, read marks ${s.readsMs} ms); measure ${m.measureMs} ms; total ${elapsed(tTotal)} ms`,
    "",
    ...textTable(
      ["query", "runs", "p50 us", "p99 us", "mean us", "max us", "rows", "p50 x PK", "p99 x PK"],
      m.results.map((r) => [
        r.name,
        String(r.iters),
        fmt(r.p50),
        fmt(r.p99),
        fmt(r.mean),
        fmt(r.max),
        fmt(r.rows),
        fmt(r.p50 / base.p50),
        fmt(r.p99 / base.p99),
      ]),
    ),
    "",
    "plans:",
    ...Object.entries(m.plans).map(([k, v]) => `  ${k}: ${v}`),
  ];
}

/** The worst (by p99) of each kind of query, next to the PK lookup. */
function summary(results: readonly Result[]): SummaryRow[] {
  const base = results[0] as Result;
  const us = (r: Result) => `${fmt(r.p50)} / ${fmt(r.p99)} µs`;
  const worst = (pick: (r: Result) => boolean) =>
    results.filter(pick).reduce((a, b) => (b.p99 > a.p99 ? b : a));
  const row = (figure: string, r: Result): SummaryRow => ({
    figure: `${figure} (p50 / p99)`,
    value: `${us(r)}${figure.startsWith("worst") ? ` (${r.name})` : ""}`,
    baseline: `PK lookup ${us(base)}`,
    ratio: Math.round((r.p99 / base.p99) * 10) / 10,
    target: "",
    pass: null,
  });
  // Each figure is the worst (by p99) of the queries whose names start with its prefix.
  const figures = {
    unread: "worst unread case at 1,000,000 messages",
    context: "context(target, 5, 5)",
    quarantine: "worst quarantine page",
    markRead: "markRead of 20 ids (a write transaction)",
  };
  return Object.entries(figures).map(([prefix, figure]) =>
    row(
      figure,
      worst((r) => r.name.startsWith(prefix)),
    ),
  );
}

export function reportStore(s: Seeded, m: Measured, tTotal: number): void {
  const bun = Bun.version;
  const nproc = navigator.hardwareConcurrency;
  const cpu = cpus()[0]?.model ?? "unknown";
  report({
    bench: "store",
    command: "bun run bench store",
    startedAt: tTotal,
    summary: summary(m.results),
    lines: lines(s, m, tTotal, { cpu, nproc }),
    results: {
      rows: ROWS,
      bun,
      sqlite: m.sqlite,
      nproc,
      cpu,
      counts: m.counts,
      channels: m.channelSizes.length,
      busiestChannelRows: m.busiest.n,
      dbBytes: m.dbBytes,
      unreadA: UNREAD_A,
      marks: s.marks,
      runs: m.runs,
      iters: ITERS,
      warmup: WARMUP,
      seedMs: s.seedMs,
      ingestRows: INGEST_ROWS,
      ingestMs: s.ingestMs,
      insertMs: s.insertMs,
      readsMs: s.readsMs,
      measureMs: m.measureMs,
      totalMs: elapsed(tTotal),
      results: m.results.map((r) => ({
        name: r.name,
        iters: r.iters,
        p50_us: Number(r.p50.toFixed(1)),
        p99_us: Number(r.p99.toFixed(1)),
        mean_us: Number(r.mean.toFixed(1)),
        max_us: Number(r.max.toFixed(1)),
        rows: r.rows,
      })),
      plans: m.plans,
    },
  });
}
