/**
 * How every benchmark reports: a few human lines, then the verdict rows, then one JSON line (the last
 * line of stdout) that `bun run bench` (bench/run.ts) collects into its summary table and into the
 * Performance section of docs/EVIDENCE.md. A row compares one figure of gw with the raw baseline or the
 * peer measured in the same run; `pass` is null for a figure that has no target. Plus the plain-text
 * table the benchmarks print.
 */
import { Database } from "bun:sqlite";
import { cpus, loadavg, totalmem } from "node:os";
import { join } from "node:path";

export interface SummaryRow {
  figure: string;
  /** gw's figure, with its unit. */
  value: string;
  /** The raw baseline or peer from the same run ("" when there is none). */
  baseline: string;
  /** gw relative to the baseline, in the direction stated by the figure (null when not meaningful). */
  ratio: number | null;
  target: string;
  pass: boolean | null;
}

export interface Machine {
  revision: string;
  cpus: number;
  cpuModel: string;
  memGiB: number;
  platform: string;
  bun: string;
  sqlite: string;
  load1: number;
}

export interface BenchReport {
  bench: string;
  /** The command that reproduces the figures. */
  command: string;
  machine: Machine;
  wallS: number;
  summary: SummaryRow[];
  results: unknown;
}

const ROOT = join(import.meta.dir, "../..");

/** The git revision, with `+dirty` when src/ or bench/ differ from it. */
export function revision(): string {
  const head = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { cwd: ROOT }).stdout.toString().trim();
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "src", "bench"], { cwd: ROOT })
    .stdout.toString()
    .trim();
  return `${head || "unknown"}${dirty ? "+dirty" : ""}`;
}

export function machine(): Machine {
  const db = new Database(":memory:");
  const sqlite = (db.query("SELECT sqlite_version() AS v").get() as { v: string }).v;
  db.close();
  return {
    revision: revision(),
    cpus: cpus().length,
    cpuModel: (cpus()[0]?.model ?? "unknown").trim(),
    memGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
    bun: Bun.version,
    sqlite,
    load1: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

export const ratio = (a: number, b: number): number => Math.round((a / b) * 100) / 100;

/** A count with thousands separators (1,000,000). */
export const commas = (x: number): string => x.toLocaleString("en-US");

/** A row without a ratio: a figure, its value, and its target and verdict or baseline where it has one. */
export function plainRow(
  figure: string,
  value: string,
  target = "",
  pass: boolean | null = null,
  baseline = "",
): SummaryRow {
  return { figure, value, baseline, ratio: null, target, pass };
}

/** A plain-text table: the first column left-aligned, the others right-aligned, a dashed rule under the head. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

type DistKey = "n" | "min" | "p50" | "p90" | "p95" | "p99" | "max" | "mean";
/** A row of a distribution table: its label, the distribution, and a last cell when the table has one. */
export type DistRow = readonly [label: string, d: Readonly<Partial<Record<DistKey, number>>>, last?: string];

/**
 * Distributions as a text table: the title over the labels, one column each of `cols` (n, p50, p99, …;
 * `format`ted, n/a where a value is not finite) and, with `lastHead`, one more column of each row's own.
 */
export function distTable(
  title: string,
  cols: readonly DistKey[],
  rows: readonly DistRow[],
  o: { lastHead?: string; format?: (x: number) => string } = {},
): string[] {
  const format = o.format ?? String;
  const cell = (x: number | undefined) => (x !== undefined && Number.isFinite(x) ? format(x) : "n/a");
  const last = (r: DistRow) => (o.lastHead === undefined ? [] : [r[2] ?? ""]);
  return textTable(
    [title, ...cols, ...(o.lastHead === undefined ? [] : [o.lastHead])],
    rows.map((r) => [`  ${r[0]}`, ...cols.map((c) => cell(r[1][c])), ...last(r)]),
  );
}

/** The verdict lines of a summary, as printed before the JSON line. */
export function verdictLines(summary: readonly SummaryRow[]): string[] {
  return summary.map((s) => {
    const mark = s.pass === null ? "    " : s.pass ? "PASS" : "FAIL";
    const base = s.baseline ? ` [${s.baseline}${s.ratio === null ? "" : `; ${s.ratio}×`}]` : "";
    return `  ${mark}  ${s.figure}: ${s.value}${s.target ? ` (target ${s.target})` : ""}${base}`;
  });
}

/** Prints the verdicts and the closing JSON line; returns the report. */
export function report(
  r: Omit<BenchReport, "machine" | "wallS"> & { startedAt: number; lines?: string[] },
): BenchReport {
  const out: BenchReport = {
    bench: r.bench,
    command: r.command,
    machine: machine(),
    wallS: Math.round((performance.now() - r.startedAt) / 100) / 10,
    summary: r.summary,
    results: r.results,
  };
  const lines = [...(r.lines ?? []), "", ...verdictLines(r.summary)];
  process.stdout.write(`${lines.join("\n")}\n${JSON.stringify(out)}\n`);
  return out;
}
