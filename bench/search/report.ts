/**
 * bench/search/search.ts's report: the run's lines (stores, migration, index size, ingest rounds), the table of
 * query cases (HTTP and in-process p50/p99, rows found), the summary rows with their targets (search p99
 * over HTTP ≤ P99_BUDGET_MS for the whole mix and per case; ingest with the search index and the
 * channel list ≥ INGEST_RATIO_MIN × without either, the previous release's ingest) and the JSON line,
 * through lib/report.ts.
 */
import { plainRow, ratio, report, type SummaryRow, textTable } from "../lib/report.ts";
import { dist, median } from "../lib/stats.ts";
import type { Rates } from "./ingest.ts";
import type { CaseResult } from "./queries.ts";
import { INGEST_RATIO_MIN, P99_BUDGET_MS } from "./settings.ts";

export interface SearchRun {
  startedAt: number;
  lines: string[];
  migrationMs: number;
  indexMiB: number;
  dbMiB: number;
  ingest: { batch: Rates; live: Rates };
  cases: CaseResult[];
}

const ms = (n: number) => (n >= 10 ? n.toFixed(1) : n.toFixed(2));
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / (xs.length || 1);

function caseTable(cases: readonly CaseResult[]): string[] {
  return textTable(
    ["case", "n", "HTTP p50 ms", "HTTP p99 ms", "HTTP max ms", "store p50 ms", "store p99 ms", "rows"],
    cases.map((c) => {
      const h = dist(c.httpMs);
      const s = dist(c.storeMs);
      return [
        c.name,
        String(h.n),
        ms(h.p50),
        ms(h.p99),
        ms(h.max),
        ms(s.p50),
        ms(s.p99),
        mean(c.rows).toFixed(1),
      ];
    }),
  );
}

/** An ingest row; `budget`: the (≥ INGEST_RATIO_MIN× in catch-up batches), else reported only. */
function ingestRow(figure: string, r: Rates, budget: boolean): SummaryRow {
  const w = median(r.with);
  const wo = median(r.without);
  return {
    figure: `${figure}, with the search index and the channel list (median of rounds)`,
    value: `${w.toLocaleString("en-US")} msg/s`,
    baseline: `without either (the ingest of the previous release) ${wo.toLocaleString("en-US")} msg/s`,
    ratio: ratio(w, wo),
    target: budget ? `≥ ${INGEST_RATIO_MIN}× without either` : "",
    pass: budget ? w / wo >= INGEST_RATIO_MIN : null,
  };
}

function summary(run: SearchRun): SummaryRow[] {
  const all = dist(run.cases.flatMap((c) => c.httpMs));
  const store = dist(run.cases.flatMap((c) => c.storeMs));
  const worst = run.cases.reduce((a, b) => (dist(b.httpMs).p99 > dist(a.httpMs).p99 ? b : a));
  const worstP99 = dist(worst.httpMs).p99;
  return [
    {
      figure: "GET /messages/search over HTTP, every case (p50 / p99)",
      value: `${ms(all.p50)} / ${ms(all.p99)} ms`,
      baseline: `store.search in process ${ms(store.p50)} / ${ms(store.p99)} ms`,
      ratio: ratio(all.p99, store.p99),
      target: `p99 ≤ ${P99_BUDGET_MS} ms`,
      pass: all.p99 <= P99_BUDGET_MS,
    },
    plainRow(
      "worst case over HTTP (p99)",
      `${ms(worstP99)} ms (${worst.name})`,
      `≤ ${P99_BUDGET_MS} ms`,
      worstP99 <= P99_BUDGET_MS,
    ),
    ingestRow("ingest, 500-message batches (catch-up)", run.ingest.batch, true),
    ingestRow("ingest, one message per transaction (live)", run.ingest.live, false),
    plainRow("migration: indexing the stored messages", `${(run.migrationMs / 1000).toFixed(1)} s`),
    plainRow(
      "index size (FTS5 tables + row map)",
      `${run.indexMiB.toFixed(0)} MiB of ${run.dbMiB.toFixed(0)} MiB`,
    ),
  ];
}

export function reportSearch(run: SearchRun, command: string): void {
  report({
    bench: "search",
    command,
    startedAt: run.startedAt,
    summary: summary(run),
    lines: [...run.lines, "", ...caseTable(run.cases)],
    results: {
      migrationMs: run.migrationMs,
      indexMiB: run.indexMiB,
      dbMiB: run.dbMiB,
      ingest: run.ingest,
      cases: run.cases.map((c) => ({
        name: c.name,
        http: dist(c.httpMs),
        store: dist(c.storeMs),
        rows: mean(c.rows),
      })),
    },
  });
}
