/**
 * bench/approval/approval.ts's report: a table of the eight figures (prompt relayed and direct, verdict and
 * ordinary push, per platform: n, stuck, p50/p90/p99/max), the summary rows (each path next to its floor
 * from the same run, ratio of the p50s; the p99 ratio and the added time in the value), the chat.db
 * watcher's resolution, the machine's load, gw serve's warnings, and the JSON line through lib/report.ts.
 */

import type { MachineLoad } from "../lib/machine.ts";
import { ratio, report, type SummaryRow, textTable } from "../lib/report.ts";
import { SEED } from "../lib/settings.ts";
import { type Dist, dist } from "../lib/stats.ts";
import type { AnswerSample, Platform, PromptSample, Samples } from "./measure.ts";
import { GAP_MAX_MS, GAP_MIN_MS, N, RATE_LIMIT_ENV, STUCK_MS, WARMUP, WATCH_POLL_MS } from "./settings.ts";
import type { WatchStats } from "./sightings.ts";

const NAME: Record<Platform, string> = { discord: "Discord", imessage: "iMessage" };

interface Figure {
  label: string;
  dist: Dist;
  stuck: number;
}

const figure = (label: string, ms: readonly (number | null)[]): Figure => ({
  label,
  dist: dist(ms.filter((x): x is number => x !== null)),
  stuck: ms.filter((x) => x === null).length,
});

export interface Figures {
  promptRelay: Record<Platform, Figure>;
  promptDirect: Record<Platform, Figure>;
  verdict: Record<Platform, Figure>;
  ordinary: Record<Platform, Figure>;
}

function figures(s: Samples): Figures {
  const prompt = (path: PromptSample["path"], p: Platform) =>
    s.prompts.filter((x) => x.path === path).map((x) => x.ms[p]);
  const answer = (path: AnswerSample["path"], p: Platform) =>
    s.answers.filter((x) => x.path === path && x.platform === p).map((x) => x.ms);
  const per = (make: (p: Platform) => Figure) => ({ discord: make("discord"), imessage: make("imessage") });
  return {
    promptRelay: per((p) => figure(`prompt relayed → ${NAME[p]}`, prompt("relay", p))),
    promptDirect: per((p) => figure(`direct POST /messages/send → ${NAME[p]}`, prompt("direct", p))),
    verdict: per((p) => figure(`${NAME[p]} answer → permission verdict`, answer("verdict", p))),
    ordinary: per((p) => figure(`${NAME[p]} ordinary message → channel push`, answer("ordinary", p))),
  };
}

const f2 = (x: number) => (Number.isFinite(x) ? (Math.round(x * 100) / 100).toString() : "n/a");
const pp = (f: Figure) => `p50 ${f2(f.dist.p50)} / p99 ${f2(f.dist.p99)} ms`;

function tableLines(f: Figures): string[] {
  const all = [f.promptRelay, f.promptDirect, f.verdict, f.ordinary].flatMap((x) => [x.discord, x.imessage]);
  return textTable(
    ["ms", "n", "stuck", "min", "p50", "p90", "p99", "max", "mean"],
    all.map((x) => [
      x.label,
      String(x.dist.n),
      String(x.stuck),
      ...[x.dist.min, x.dist.p50, x.dist.p90, x.dist.p99, x.dist.max, x.dist.mean].map(f2),
    ]),
  );
}

/** A path next to its floor: value and baseline as p50/p99, ratio of the p50s (p99 ratio and the gap in the value). */
function pairRow(what: string, path: Figure, floor: Figure, floorName: string): SummaryRow {
  const p99x = ratio(path.dist.p99, floor.dist.p99);
  const gap = path.dist.p50 - floor.dist.p50;
  const added = `${gap >= 0 ? "+" : "−"}${f2(Math.abs(gap))}`;
  return {
    figure: `${what} (ratio: p50 ÷ ${floorName} p50)`,
    value: `${pp(path)}; p99 ${p99x}× the floor's; ${added} ms at p50; ${path.stuck} stuck (n ${path.dist.n})`,
    baseline: `${floorName} ${pp(floor)}, ${floor.stuck} stuck`,
    ratio: ratio(path.dist.p50, floor.dist.p50),
    target: "",
    pass: null,
  };
}

function summaryRows(f: Figures, s: Samples): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const p of ["discord", "imessage"] as const)
    rows.push(
      pairRow(
        `permission_request → prompt ${p === "discord" ? "posted on Discord" : "committed into chat.db"}`,
        f.promptRelay[p],
        f.promptDirect[p],
        "direct POST /messages/send",
      ),
    );
  for (const p of ["discord", "imessage"] as const)
    rows.push(
      pairRow(
        `owner's ${NAME[p]} answer committed → permission verdict at the MCP client`,
        f.verdict[p],
        f.ordinary[p],
        "ordinary message → channel push",
      ),
    );
  const verdicts = s.answers.filter((a) => a.path === "verdict");
  const right = verdicts.filter((a) => a.ms !== null && !a.wrong).length;
  const stuck = [f.promptRelay, f.promptDirect, f.verdict, f.ordinary]
    .flatMap((x) => [x.discord.stuck, x.imessage.stuck])
    .reduce((a, b) => a + b, 0);
  rows.push({
    figure: "every prompt seen on both platforms, every verdict the one answered",
    value: `${right}/${verdicts.length} verdicts right; ${stuck} sightings stuck (over ${STUCK_MS} ms)`,
    baseline: "",
    ratio: null,
    target: "all right, 0 stuck",
    pass: right === verdicts.length && stuck === 0,
  });
  return rows;
}

export interface RunInfo {
  startedAt: number;
  quietWaitS: number;
  machine: MachineLoad;
  timedS: number;
  watch: WatchStats;
  serveWarnings: string[];
  mcpStderr: string;
}

/**
 * Each prompt figure split by which of the two sends went first (the order GET /channels gives the relay,
 * matched by the direct sends): p50 and p99 by path, platform and first platform, and the GET's own time.
 */
function orderSplit(s: Samples) {
  const split: Record<string, { n: number; p50: number; p99: number }> = {};
  for (const path of ["relay", "direct"] as const)
    for (const p of ["discord", "imessage"] as const)
      for (const first of ["discord", "imessage"] as const) {
        const ms = s.prompts
          .filter((x) => x.path === path && x.first === first)
          .map((x) => x.ms[p])
          .filter((x): x is number => x !== null);
        const d = dist(ms);
        split[`${path} ${p}, ${first} sent first`] = { n: d.n, p50: d.p50, p99: d.p99 };
      }
  return { split, listMs: dist(s.prompts.map((x) => x.listMs)) };
}

function orderLines(s: Samples): string[] {
  const { split, listMs } = orderSplit(s);
  return [
    "prompt figures by the platform sent first (n, p50 / p99 ms):",
    ...Object.entries(split).map(([k, v]) => `  ${k}: n ${v.n}, ${f2(v.p50)} / ${f2(v.p99)}`),
    `GET /channels?person_id (the relay's first call; timed from this process, untimed before each t0): p50 ${f2(listMs.p50)} / p99 ${f2(listMs.p99)} ms`,
  ];
}

function infoLines(info: RunInfo): string[] {
  const ticks = dist(info.watch.tickGapsMs);
  return [
    `chat.db watcher: ${info.watch.byEvent} prompt rows sighted on an fs.watch event, ${info.watch.byTimer} on the ${WATCH_POLL_MS} ms timer (its real period p50 ${f2(ticks.p50)} / p99 ${f2(ticks.p99)} ms)`,
    `timed part ${info.timedS} s after ${info.quietWaitS} s waiting for a quiet machine; machine busy ${info.machine.busyPctAllCores} % of all cores (load ${info.machine.load1Start} → ${info.machine.load1End})`,
    `gw serve warnings and errors: ${info.serveWarnings.length}${info.serveWarnings.length > 0 ? `; first: ${info.serveWarnings[0]?.slice(0, 300)}` : ""}`,
  ];
}

export function reportApproval(s: Samples, info: RunInfo) {
  const f = figures(s);
  const ticks = dist(info.watch.tickGapsMs);
  return report({
    bench: "approval",
    command: "bun run bench approval",
    startedAt: info.startedAt,
    summary: summaryRows(f, s),
    lines: [
      "",
      `phone approval, ${N} requests one at a time (${WARMUP} untimed first), ${GAP_MIN_MS}–${GAP_MAX_MS} ms between steps (ms)`,
      ...tableLines(f),
      "",
      ...orderLines(s),
      "",
      ...infoLines(info),
    ],
    results: {
      settings: {
        n: N,
        warmup: WARMUP,
        gapMs: [GAP_MIN_MS, GAP_MAX_MS],
        stuckMs: STUCK_MS,
        seed: SEED,
        serveEnv: RATE_LIMIT_ENV,
      },
      figures: f,
      byOrder: orderSplit(s),
      watcher: { byEvent: info.watch.byEvent, byTimer: info.watch.byTimer, timerPeriodMs: ticks },
      quietWaitS: info.quietWaitS,
      machineLoad: info.machine,
      timedS: info.timedS,
      serveWarnings: info.serveWarnings.slice(0, 20),
      mcpStderrTail: info.mcpStderr.slice(-2000),
      samples: s,
    },
  });
}
