/**
 * bench/api/api.ts's figures and report: per mix and server, total requests / total seconds, the mean of
 * the runs' p50 and the worst of their p99; the gateway/raw ratios and the growth verdict; the tables
 * (agents, runs, growth), the summary rows against the targets and the JSON line (lib/report.ts).
 */
import { cpus } from "node:os";
import { openStore } from "../../src/store/store.ts";
import { report, type SummaryRow, textTable } from "../lib/report.ts";
import type { Growth } from "./growth.ts";
import type { Mix, RunResult, Summary } from "./runs.ts";
import type { Seeded } from "./seed.ts";
import type { Target } from "./servers.ts";
import {
  AGENTS,
  CHANNELS,
  CONNECTIONS,
  DURATION_S,
  fmt,
  GROWTH_AGENTS,
  GROWTH_LARGE,
  GROWTH_SMALL,
  LIGHT,
  LOADGEN,
  ROUNDS,
  ROWS,
  round1,
  TARGET_BARE_RATIO,
  TARGET_GROWTH,
  TARGET_RATIO,
  THREADS,
  UNREAD_PATH,
  WARMUP_S,
  WRK,
} from "./settings.ts";

export interface ApiRun {
  tTotal: number;
  dbPath: string;
  seeded: Seeded;
  rowsPerAgent: Record<string, number>;
  mixes: Mix[];
  runs: RunResult[];
  growth: Growth;
}

function summarize(runs: readonly RunResult[], mix: string, target: Target): Summary {
  const rs = runs.filter((r) => r.mix === mix && r.target === target);
  const requests = rs.reduce((s, r) => s + r.requests, 0);
  const cpu = rs.every((r) => r.serverCpuMs !== null)
    ? rs.reduce((s, r) => s + (r.serverCpuMs ?? 0), 0)
    : null;
  return {
    rps: requests / rs.reduce((s, r) => s + r.seconds, 0),
    p50: rs.reduce((s, r) => s + r.p50, 0) / rs.length,
    p99: Math.max(...rs.map((r) => r.p99)),
    bytesPerRequest: rs.reduce((s, r) => s + r.bytes, 0) / requests,
    cpuUsPerRequest: cpu === null ? null : (cpu * 1000) / requests,
    failures: rs.reduce((s, r) => s + r.non2xx + r.errors, 0),
  };
}

/** The summaries, ratios and verdicts of a run. */
function figures(run: ApiRun) {
  const { runs, growth } = run;
  const main = run.mixes[0] as Mix;
  const gateway = summarize(runs, main.name, "gateway");
  const raw = summarize(runs, main.name, "raw");
  const bare = summarize(runs, main.name, "bare");
  const ratio = gateway.rps / raw.rps;
  const bareRatio = gateway.rps / bare.rps;
  const light = LIGHT
    ? {
        gateway: summarize(runs, "agent-0 only", "gateway"),
        raw: summarize(runs, "agent-0 only", "raw"),
        bare: summarize(runs, "agent-0 only", "bare"),
      }
    : null;
  const worstGrowth = Math.max(...GROWTH_AGENTS.map((a) => growth.growthRatios[a]?.p50 ?? Number.NaN));
  const lightRatio = light ? light.gateway.rps / light.raw.rps : null;
  const lightBareRatio = light ? light.gateway.rps / light.bare.rps : null;
  const verdicts = {
    throughput: { ratio, target: TARGET_RATIO, pass: ratio >= TARGET_RATIO },
    lightThroughput: {
      ratio: lightRatio,
      target: TARGET_RATIO,
      pass: lightRatio === null ? null : lightRatio >= TARGET_RATIO,
    },
    bareThroughput: { ratio: bareRatio, target: TARGET_BARE_RATIO, pass: bareRatio >= TARGET_BARE_RATIO },
    lightBareThroughput: {
      ratio: lightBareRatio,
      target: TARGET_BARE_RATIO,
      pass: lightBareRatio === null ? null : lightBareRatio >= TARGET_BARE_RATIO,
    },
    growth: growth.large
      ? { worst_p50_ratio: worstGrowth, target: TARGET_GROWTH, pass: worstGrowth <= TARGET_GROWTH }
      : { worst_p50_ratio: null, target: TARGET_GROWTH, pass: null },
  };
  return { main, gateway, raw, bare, ratio, bareRatio, light, lightRatio, lightBareRatio, verdicts };
}

type Figures = ReturnType<typeof figures>;

/** SQLite's version, the load generator, the machine. */
function setting(dbPath: string) {
  const probe = openStore(dbPath);
  const sqlite = (probe.db.prepare("select sqlite_version() AS v").get() as { v: string }).v;
  probe.close();
  const loadgen =
    LOADGEN === "wrk"
      ? (Bun.spawnSync([WRK as string, "--version"])
          .stdout.toString()
          .split(" [")[0] ?? "wrk")
      : "bun client (bench/api/load.ts)";
  return { sqlite, loadgen, nproc: navigator.hardwareConcurrency, cpu: cpus()[0]?.model ?? "unknown" };
}

/** The run's setting, then the agents' table and where a page's time goes. */
function agentLines(run: ApiRun, f: Figures, s: ReturnType<typeof setting>): string[] {
  const { seeded, growth } = run;
  const { atRows, page } = growth;
  const light = f.light;
  return [
    `gw api benchmark — bun ${Bun.version}, sqlite ${s.sqlite}, ${s.nproc} CPUs (${s.cpu}); load: ${s.loadgen}`,
    `rows ${ROWS} (allowed ${seeded.allowed}, unknown ${seeded.unknown}, outbound ${seeded.outbound}; ` +
      `${seeded.attachments} attachments); ${CHANNELS} channels; db ${(seeded.dbBytes / 2 ** 20).toFixed(0)} MiB; seed ${seeded.seedMs} ms`,
    `load: GET ${UNREAD_PATH}, ${CONNECTIONS} connections, ${THREADS} threads, ${WARMUP_S} s warm-up + ${DURATION_S} s ` +
      `per run, one server process at a time, ABBA order`,
    "",
    ...textTable(
      ["agent", "read state", "marks", "runs", "rows", "unread() p50 us", "mean us"],
      AGENTS.map((a) => [
        a,
        seeded.describe[a] ?? "",
        String(seeded.marks[a] ?? 0),
        String(seeded.runs[a] ?? 0),
        String(run.rowsPerAgent[a] ?? 0),
        fmt(atRows[a]?.p50),
        fmt(atRows[a]?.mean),
      ]),
    ),
    `store.reads.unread alone, mean over the 10 agents: ${fmt(growth.storeMeanUs)} us ` +
      `(server CPU per request: gateway ${fmt(f.gateway.cpuUsPerRequest)} us, raw ${fmt(f.raw.cpuUsPerRequest)} us)`,
    `one agent-0 page in-process: unread ${fmt(page.unreadUs)} us + the page's attachment query ${fmt(page.attachmentsUs)} us ` +
      `+ toEnvelope and JSON.stringify ${fmt(page.envelopeJsonUs)} us` +
      (light
        ? ` (server CPU per request, agent-0 only: gateway ${fmt(light.gateway.cpuUsPerRequest)} us, raw ${fmt(light.raw.cpuUsPerRequest)} us)`
        : ""),
    "",
  ];
}

/** Every timed run, then the summary rows of each mix and server. */
function runLines(runs: readonly RunResult[], f: Figures): string[] {
  const summaryRow = (mix: string, target: Target, s: Summary) => [
    `${mix}: all ${target}`,
    fmt(s.rps),
    fmt(s.p50),
    "",
    fmt(s.p99),
    "",
    fmt(s.bytesPerRequest),
    fmt(s.cpuUsPerRequest),
    String(s.failures),
    "",
  ];
  const head = ["run", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "bytes/req", "srv CPU us/req"];
  return [
    ...textTable(
      [...head, "failed", "other CPU %"],
      [
        ...runs.map((r) => [
          `${r.mix}: round ${r.round} ${r.target}${r.attempts > 1 ? ` (attempt ${r.attempts})` : ""}`,
          fmt(r.rps),
          fmt(r.p50),
          fmt(r.p90),
          fmt(r.p99),
          fmt(r.max),
          fmt(r.bytes / r.requests),
          r.serverCpuMs === null ? "-" : fmt((r.serverCpuMs * 1000) / r.requests),
          String(r.non2xx + r.errors),
          r.otherCpuShare === null ? "-" : fmt(r.otherCpuShare * 100, 1),
        ]),
        summaryRow(f.main.name, "gateway", f.gateway),
        summaryRow(f.main.name, "raw", f.raw),
        summaryRow(f.main.name, "bare", f.bare),
        ...(f.light
          ? [
              summaryRow("agent-0 only", "gateway", f.light.gateway),
              summaryRow("agent-0 only", "raw", f.light.raw),
              summaryRow("agent-0 only", "bare", f.light.bare),
            ]
          : []),
      ],
    ),
    "(summary rows: requests / seconds over the runs, mean of the runs' p50, worst of their p99; " +
      "other CPU: processes other than the server and the load generator, as a share of all CPUs)",
    "",
  ];
}

function growthLines(run: ApiRun): string[] {
  const { dbs, timings, growthRatios } = run.growth;
  return [
    ...textTable(
      ["unread(agent, limit 20), in-process", ...dbs.map((d) => `${d.rows} p50 / p99 us`), "ratio p50 / p99"],
      GROWTH_AGENTS.map((a) => [
        `${a} (${run.seeded.describe[a]})`,
        ...dbs.map((d) => `${fmt(timings.get(d.rows)?.[a]?.p50)} / ${fmt(timings.get(d.rows)?.[a]?.p99)}`),
        growthRatios[a] ? `${fmt(growthRatios[a]?.p50)} / ${fmt(growthRatios[a]?.p99)}` : "-",
      ]),
    ),
    "",
  ];
}

function summaryRows(f: Figures): SummaryRow[] {
  const rps = (x: { rps: number; p99: number }) => `${fmt(x.rps)} req/s, p99 ${fmt(x.p99)} ms`;
  return [
    ...(f.light
      ? [
          {
            figure: `unread, one agent (nothing read), ${CONNECTIONS} connections`,
            value: rps(f.light.gateway),
            baseline: `bare Bun.serve, same store calls and JSON: ${rps(f.light.raw)}`,
            ratio: Math.round((f.lightRatio ?? 0) * 100) / 100,
            target: `≥ ${TARGET_RATIO}× raw req/s`,
            pass: f.verdicts.lightThroughput.pass,
          },
          {
            figure: `unread, one agent (nothing read), ${CONNECTIONS} connections, vs a bare server`,
            value: rps(f.light.gateway),
            baseline: `Bun.serve + plain SQL on a plain schema (bare.ts): ${rps(f.light.bare)}`,
            ratio: Math.round((f.lightBareRatio ?? 0) * 100) / 100,
            target: `≥ ${TARGET_BARE_RATIO}× bare req/s`,
            pass: f.verdicts.lightBareThroughput.pass,
          },
        ]
      : []),
    {
      figure: `unread, 10 agents with heavier read layouts, ${CONNECTIONS} connections`,
      value: rps(f.gateway),
      baseline: `bare Bun.serve: ${rps(f.raw)}`,
      ratio: Math.round(f.ratio * 100) / 100,
      target: `≥ ${TARGET_RATIO}× raw req/s`,
      pass: f.verdicts.throughput.pass,
    },
    {
      figure: `unread, 10 agents with heavier read layouts, ${CONNECTIONS} connections, vs a bare server`,
      value: rps(f.gateway),
      baseline: `Bun.serve + plain SQL on a plain schema (bare.ts): ${rps(f.bare)}`,
      ratio: Math.round(f.bareRatio * 100) / 100,
      target: `≥ ${TARGET_BARE_RATIO}× bare req/s`,
      pass: f.verdicts.bareThroughput.pass,
    },
    {
      figure: `unread time growth ${GROWTH_SMALL.toLocaleString("en-US")} → ${GROWTH_LARGE.toLocaleString("en-US")} messages (worst p50 ratio)`,
      value:
        f.verdicts.growth.worst_p50_ratio === null ? "skipped" : `${fmt(f.verdicts.growth.worst_p50_ratio)}×`,
      baseline: "",
      ratio: null,
      target: `≤ ${TARGET_GROWTH}×`,
      pass: f.verdicts.growth.pass,
    },
  ];
}

const runResult = (r: RunResult) => ({
  mix: r.mix,
  target: r.target,
  round: r.round,
  requests: r.requests,
  seconds: r.seconds,
  rps: Math.round(r.rps),
  p50_ms: r.p50,
  p90_ms: r.p90,
  p99_ms: r.p99,
  max_ms: r.max,
  bytes_per_request: Math.round(r.bytes / r.requests),
  server_cpu_us_per_request: r.serverCpuMs === null ? null : Math.round((r.serverCpuMs * 1000) / r.requests),
  failed: r.non2xx + r.errors,
  loadgen_cpu_ms: r.loadgenCpuMs === null ? null : Math.round(r.loadgenCpuMs),
  other_cpu_share: r.otherCpuShare === null ? null : Number(r.otherCpuShare.toFixed(3)),
  attempts: r.attempts,
});

/** The report's `results`: settings, counts, the agents, the page, every run, the summaries, growth. */
function results(run: ApiRun, f: Figures, loadgen: string) {
  const { seeded, growth } = run;
  const { atRows, page } = growth;
  return {
    loadgen,
    rows: ROWS,
    counts: {
      allowed: seeded.allowed,
      unknown: seeded.unknown,
      outbound: seeded.outbound,
      attachments: seeded.attachments,
    },
    dbBytes: seeded.dbBytes,
    seedMs: seeded.seedMs,
    connections: CONNECTIONS,
    threads: THREADS,
    durationS: DURATION_S,
    warmupS: WARMUP_S,
    rounds: ROUNDS,
    agents: AGENTS.map((a) => ({
      agent: a,
      read: seeded.describe[a],
      marks: seeded.marks[a] ?? 0,
      runs: seeded.runs[a] ?? 0,
      rows: run.rowsPerAgent[a],
      unread_p50_us: round1(atRows[a]?.p50 ?? null),
      unread_mean_us: round1(atRows[a]?.mean ?? null),
    })),
    storeUnreadMeanUs: round1(growth.storeMeanUs),
    agent0Page: {
      unread_us: round1(page.unreadUs),
      attachments_us: round1(page.attachmentsUs),
      envelope_json_us: round1(page.envelopeJsonUs),
    },
    runs: run.runs.map(runResult),
    gateway: f.gateway,
    raw: f.raw,
    bare: f.bare,
    light: f.light,
    growth: growth.dbs.map((d) => ({
      rows: d.rows,
      seedMs: growth.seeds[d.rows]?.seedMs,
      dbBytes: growth.seeds[d.rows]?.dbBytes,
      unread_us: Object.fromEntries(
        GROWTH_AGENTS.map((a) => {
          const t = growth.timings.get(d.rows)?.[a];
          return [a, t ? { p50: round1(t.p50), p99: round1(t.p99), rows: t.rows } : null];
        }),
      ),
    })),
    growthRatios: growth.growthRatios,
    verdicts: f.verdicts,
  };
}

export function reportApi(run: ApiRun): void {
  const f = figures(run);
  const s = setting(run.dbPath);
  const summary = summaryRows(f);
  const out = [
    ...agentLines(run, f, s),
    ...runLines(run.runs, f),
    ...growthLines(run),
    `total ${Math.round((performance.now() - run.tTotal) / 1000)} s`,
  ];
  report({
    bench: "api",
    command: "bun run bench api",
    startedAt: run.tTotal,
    summary,
    lines: out,
    results: results(run, f, s.loadgen),
  });
}
