/**
 * bench/pickup/pickup.ts's report: a table per phase and mode (seen, p50/p90/p99/max, over 50 ms, stuck), the
 * late and stuck rows, the summary rows (gw's unread, webhook, long poll and channel figures against the
 * targets with imessage-kit's or the Claude plugin's figure as baseline; the peers and floors; the poll
 * phase against its interval) and the JSON line through lib/report.ts.
 */
import { report, type SummaryRow } from "../lib/report.ts";
import { SEED } from "../lib/settings.ts";
import type { FigureResult } from "./match.ts";
import type { ModeResult, PollResult } from "./phases.ts";
import {
  GAP_MAX_MS,
  GAP_MIN_MS,
  LIVE_TARGET,
  LIVE_TARGET_TEXT,
  MODES,
  POLL_MS,
  POLL_SAMPLES,
  POLL_SYNC,
  SAMPLES,
  STEP_MS,
  STUCK_MS,
  TARGET,
  TARGET_TEXT,
  WARMUP,
} from "./settings.ts";

const f1 = (x: number) => (Number.isFinite(x) ? (Math.round(x * 10) / 10).toString() : "n/a");
const pp = (r: FigureResult | undefined) =>
  r ? `p50 ${f1(r.latency.p50)} / p99 ${f1(r.latency.p99)} / max ${f1(r.latency.max)} ms` : "n/a";
const full = (r: FigureResult | undefined) =>
  r ? `${pp(r)}; ${r.over50} over ${TARGET.overMs} ms; ${r.stuck} stuck (n ${r.n})` : "n/a";
const short = (r: FigureResult | undefined) =>
  r
    ? `${f1(r.latency.p50)} / ${f1(r.latency.p99)} ms, ${r.over50} over ${TARGET.overMs}, ${r.stuck} stuck`
    : "n/a";
const meets = (r: FigureResult | undefined) =>
  r !== undefined &&
  r.n > 0 &&
  r.stuck === 0 &&
  r.over50 === 0 &&
  r.latency.p50 <= TARGET.p50 &&
  r.latency.p99 <= TARGET.p99;

function tableLines(
  modes: readonly ModeResult[],
  poll: PollResult | null,
  skipped: Record<string, string>,
): string[] {
  const lines: string[] = [];
  const head = `${"".padEnd(64)}${["seen", "p50", "p90", "p99", "max", ">50ms", "stuck"].map((h) => h.padStart(8)).join("")}`;
  const row = (r: FigureResult) =>
    `  ${r.label.padEnd(62)}${[
      r.seen,
      r.latency.p50,
      r.latency.p90,
      r.latency.p99,
      r.latency.max,
      r.over50,
      r.stuck,
    ]
      .map((x) => f1(x).padStart(8))
      .join("")}`;
  for (const m of modes) {
    lines.push("", `commit → seen, synchronous=${m.sync}, ${SAMPLES} commits (ms)`, head);
    for (const r of Object.values(m.figures)) lines.push(row(r));
    for (const r of Object.values(m.figures)) {
      if (r.over50 === 0 && r.stuck === 0) continue;
      lines.push(
        `  ${r.label}: ${r.lateAtNextCommit} of ${r.over50} late rows seen within 10 ms after the next commit${r.stuck > 0 ? `; stuck rows (of ${r.n}): #${r.stuckRows.join(", #")}` : ""}`,
      );
    }
    lines.push(
      `  writer commit duration p50 ${f1(m.commitMs.p50)}, p99 ${f1(m.commitMs.p99)} ms; machine busy ${m.machine.busyPctAllCores} % of all cores (load ${m.machine.load1Start} → ${m.machine.load1End}); ${m.wallS} s`,
    );
  }
  if (poll) {
    lines.push(
      "",
      `commit → seen, notifications off (${POLL_MS} ms timer), synchronous=${poll.sync} (ms)`,
      head,
    );
    for (const r of Object.values(poll.figures)) lines.push(row(r));
    lines.push(
      `  machine busy ${poll.machine.busyPctAllCores} % of all cores (load ${poll.machine.load1Start} → ${poll.machine.load1End}); ${poll.wallS} s`,
    );
  }
  for (const [name, why] of Object.entries(skipped)) lines.push(`SKIPPED ${name}: ${why}`);
  return lines;
}

/** The rows of one notify mode: gw's figures against the targets, then the peers and floors. */
function modeRows(m: ModeResult, skipped: Record<string, string>): SummaryRow[] {
  const summary: SummaryRow[] = [];
  const f = m.figures;
  const kit = f["peer.kit"];
  const claude = f["peer.claude"];
  const peers = [
    `floor fs.watch row readable ${short(f["floor.readable"])}`,
    `imessage-kit ${short(kit)}`,
    claude ? `Claude plugin ${short(claude)}` : "Claude plugin skipped",
  ].join("; ");
  for (const id of ["gw.unread", "gw.webhook"]) {
    const r = f[id];
    if (!r) continue;
    summary.push({
      figure: `${m.sync}: commit → ${id === "gw.unread" ? "listed by GET /messages/unread" : "signed webhook received"} (ratio: p99 ÷ imessage-kit p99)`,
      value: full(r),
      baseline: peers,
      ratio: kit && kit.latency.p99 > 0 ? Math.round((r.latency.p99 / kit.latency.p99) * 100) / 100 : null,
      target: TARGET_TEXT,
      pass: meets(r),
    });
  }
  for (const id of ["gw.longpoll", "gw.channel"]) {
    const r = f[id];
    if (!r) continue;
    summary.push({
      figure: `${m.sync}: commit → ${r.label} (ratio: p50 ÷ Claude plugin p50)`,
      value: full(r),
      baseline: peers,
      ratio:
        claude && claude.latency.p50 > 0
          ? Math.round((r.latency.p50 / claude.latency.p50) * 1000) / 1000
          : null,
      target: LIVE_TARGET_TEXT,
      pass: r.n > 0 && r.stuck === 0 && r.latency.p50 <= LIVE_TARGET.p50 && r.latency.p99 <= LIVE_TARGET.p99,
    });
  }
  const gwUnread = f["gw.unread"];
  for (const id of ["gw.ingest", "peer.kit", "peer.claude", "floor.event", "floor.readable"]) {
    const r = f[id];
    if (!r) continue;
    summary.push({
      figure: `${m.sync}: ${r.label}${r.role === "peer" ? " (ratio: p99 ÷ gw unread p99)" : ""}`,
      value: full(r),
      baseline: r.role === "peer" ? `gw unread ${short(gwUnread)}` : "",
      ratio:
        r.role === "peer" && gwUnread && gwUnread.latency.p99 > 0
          ? Math.round((r.latency.p99 / gwUnread.latency.p99) * 100) / 100
          : null,
      target: "",
      pass: null,
    });
  }
  if (!claude && skipped["Claude Code iMessage plugin"])
    summary.push({
      figure: `${m.sync}: Claude Code plugin`,
      value: `skipped: ${skipped["Claude Code iMessage plugin"]}`,
      baseline: "",
      ratio: null,
      target: "",
      pass: null,
    });
  return summary;
}

/** The poll phase's row: gw's worst pick-up next to the bare poll loop's. */
function pollRow(poll: PollResult): SummaryRow {
  const r = poll.figures["gw.unread"];
  const floor = poll.figures["floor.poll"];
  const limit = POLL_MS + TARGET.pollSlackMs;
  return {
    figure: `notifications off (${POLL_MS} ms timer): commit → listed by GET /messages/unread, max (ratio: max ÷ floor max)`,
    value: full(r),
    baseline: `bare data_version + MAX(ROWID) loop every ${POLL_MS} ms: ${pp(floor)}; ${floor?.stuck ?? "?"} stuck`,
    ratio:
      r && floor && floor.latency.max > 0
        ? Math.round((r.latency.max / floor.latency.max) * 100) / 100
        : null,
    target: `max ≤ ${limit} ms (interval + ${TARGET.pollSlackMs}), 0 stuck`,
    pass: r !== undefined && r.n > 0 && r.stuck === 0 && r.latency.max <= limit,
  };
}

export function reportPickup(
  startedAt: number,
  modes: readonly ModeResult[],
  poll: PollResult | null,
  info: { watchers: Record<string, unknown>; skipped: Record<string, string> },
): void {
  const { skipped } = info;
  const lines = tableLines(modes, poll, skipped);
  const summary = [...modes.flatMap((m) => modeRows(m, skipped)), ...(poll ? [pollRow(poll)] : [])];
  report({
    bench: "pickup",
    command: "bun run bench pickup",
    startedAt,
    lines,
    summary,
    results: {
      config: {
        samples: SAMPLES,
        warmup: WARMUP,
        gapMs: [GAP_MIN_MS, GAP_MAX_MS],
        stepMs: STEP_MS,
        stuckMs: STUCK_MS,
        sync: MODES,
        pollMs: POLL_MS,
        pollSamples: POLL_SAMPLES,
        pollSync: POLL_SYNC,
        seed: SEED,
      },
      modes,
      poll,
      watchers: info.watchers,
      skipped,
    },
  });
}
