/**
 * How bench/pickup/pickup.ts ties a figure's sightings to the commits: per commit (warm-up included, for the
 * event boundaries) the sighting's latency, by text, by the first ROWID at or above the commit's, or as
 * the first event between a commit's start and the next one's; then per figure the timed commits seen
 * within BENCH_STUCK_MS (their latency by lib/stats.ts's dist), those later than 50 ms, and the stuck.
 */
import { now } from "../lib/child-protocol.ts";
import { type Dist, dist } from "../lib/stats.ts";
import { STUCK_MS, TARGET } from "./settings.ts";
import type { Commit, FigureSpec, Role, Watcher } from "./watchers.ts";

export interface FigureResult {
  label: string;
  role: Role;
  /** Timed commits, seen within BENCH_STUCK_MS, seen later than TARGET.overMs (not stuck), stuck. */
  n: number;
  seen: number;
  over50: number;
  stuck: number;
  latency: Dist;
  /** Late rows (over TARGET.overMs) seen between the next commit's start and 10 ms after it returned. */
  lateAtNextCommit: number;
  /** Positions (1-based, among the timed commits) of the stuck rows; the last one has no next commit. */
  stuckRows: number[];
}

/** Per commit (warm-up included, for the event boundaries): the sighting's latency, or null. */
function latencies(commits: readonly Commit[], spec: FigureSpec, s: [string | number, number][]) {
  if (spec.match === "text") {
    const first = new Map<string | number, number>();
    for (const [k, t] of s) if (!first.has(k)) first.set(k, t);
    return commits.map((c) => {
      const t = first.get(c.text);
      return t === undefined ? null : t - c.tCommit;
    });
  }
  const sorted = [...s].sort((a, b) => a[1] - b[1]);
  if (spec.match === "rowid") {
    return commits.map((c) => {
      const hit = sorted.find(([k]) => (k as number) >= c.rowid);
      return hit ? hit[1] - c.tCommit : null;
    });
  }
  return commits.map((c, i) => {
    const next = commits[i + 1]?.tBegin ?? Number.POSITIVE_INFINITY;
    const hit = sorted.find(([, t]) => t >= c.tBegin && t < next);
    return hit ? hit[1] - c.tCommit : null;
  });
}

function summarise(
  commits: readonly Commit[],
  spec: FigureSpec,
  s: [string | number, number][],
): FigureResult {
  const all = latencies(commits, spec, s);
  const timed = commits.flatMap((c, i) => (c.warm ? [] : [{ c, i, x: all[i] ?? null }]));
  const ok = timed.flatMap(({ x }) => (x !== null && x <= STUCK_MS ? [x] : []));
  const late = timed.filter(({ x }) => x !== null && x > TARGET.overMs && x <= STUCK_MS);
  return {
    label: spec.label,
    role: spec.role,
    n: timed.length,
    seen: ok.length,
    over50: late.length,
    stuck: timed.length - ok.length,
    latency: dist(ok),
    lateAtNextCommit: late.filter(({ c, i, x }) => {
      const next = commits[i + 1];
      const t = c.tCommit + (x as number);
      return next !== undefined && t >= next.tBegin && t <= next.tCommit + 10;
    }).length,
    stuckRows: timed.flatMap(({ x }, k) => (x === null || x > STUCK_MS ? [k + 1] : [])),
  };
}

export async function collect(watchers: readonly Watcher[], commits: readonly Commit[]) {
  const figures: Record<string, FigureResult> = {};
  for (const w of watchers) {
    const s = await w.sightings();
    for (const spec of w.figures) figures[spec.id] = summarise(commits, spec, s.get(spec.id) ?? []);
  }
  return figures;
}

/** After the last commit: until every watcher saw it, or BENCH_STUCK_MS after it. */
export async function settle(watchers: readonly Watcher[], last: Commit | undefined): Promise<void> {
  if (!last) return;
  const deadline = last.tCommit + STUCK_MS + 100;
  while (now() < deadline) {
    const seen = await Promise.all(watchers.map((w) => w.hasSeen(last)));
    if (seen.every(Boolean)) return;
    await Bun.sleep(10);
  }
}
