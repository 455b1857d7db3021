/**
 * bench/pickup/pickup.ts's phases. This script plays Messages: it writes one row per transaction into the
 * shared chat.db and stamps the commit (from before writer.message() to its return). "notify": per
 * writer `synchronous` mode, WARMUP untimed then SAMPLES timed commits at seeded random gaps, whatever
 * the watchers do; "poll": gw with notifications off, each commit once the previous one was listed.
 * After the last commit, wait until every watcher saw it or it is stuck.
 */
import type { ChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { FRIEND, FRIEND_CHAT, type SyncMode, setSynchronous } from "../lib/chatdb.ts";
import { now } from "../lib/child-protocol.ts";
import { type ClaudePlugin, prepareClaudePlugin } from "../lib/claude-plugin.ts";
import { type MachineLoad, withMachineLoad } from "../lib/machine.ts";
import type { Session } from "../lib/session.ts";
import { SECRET } from "../lib/settings.ts";
import { Sink } from "../lib/sink.ts";
import { type Dist, dist } from "../lib/stats.ts";
import { collect, type FigureResult, settle } from "./match.ts";
import { claudeWatcher, floorPoll, floorWatch, kitWatcher } from "./peers.ts";
import {
  GAP_MAX_MS,
  GAP_MIN_MS,
  MODES,
  POLL_MS,
  POLL_SAMPLES,
  POLL_SYNC,
  POLL_WARMUP,
  progress,
  random,
  SAMPLES,
  STUCK_MS,
  WARMUP,
} from "./settings.ts";
import {
  type Commit,
  GW_OBSERVERS,
  gwWatcher,
  type Scene,
  startGw,
  unreadPoller,
  type Watcher,
} from "./watchers.ts";

/** The run's scene with the chat.db writer (this script plays Messages) and what the phases note. */
export interface Stage extends Scene {
  session: Session;
  writer: ChatDbWriter;
  /** Makes this run's texts unique. */
  nonce: string;
  watcherInfo: Record<string, unknown>;
  skipped: Record<string, string>;
}

function commitOne(
  stage: Stage,
  label: string,
  i: number,
  warm: boolean,
  watchers: readonly Watcher[],
): Commit {
  const { writer, nonce } = stage;
  const text = `pickup ${label} ${nonce} #${i}`;
  const tBegin = now();
  const { rowid } = writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
  const tCommit = now();
  const c = { text, rowid, tBegin, tCommit, warm };
  for (const w of watchers) w.onCommit?.(c);
  return c;
}

export interface ModeResult {
  sync: SyncMode;
  commitMs: Dist;
  figures: Record<string, FigureResult>;
  machine: MachineLoad;
  wallS: number;
}

async function notifyMode(stage: Stage, sync: SyncMode, watchers: readonly Watcher[]): Promise<ModeResult> {
  setSynchronous(stage.writer, sync);
  progress(
    `notify, synchronous=${sync}: ${WARMUP} warm-up + ${SAMPLES} commits, gaps ${GAP_MIN_MS}–${GAP_MAX_MS} ms`,
  );
  const t0 = now();
  const [commits, machine] = await withMachineLoad(async () => {
    const out: Commit[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      await Bun.sleep(GAP_MIN_MS + Math.floor(random() * (GAP_MAX_MS - GAP_MIN_MS + 1)));
      out.push(commitOne(stage, sync, i, i < WARMUP, watchers));
      if ((i - WARMUP + 1) % 50 === 0 && i >= WARMUP) progress(`  ${sync}: ${i - WARMUP + 1}/${SAMPLES}`);
    }
    await settle(watchers, out[out.length - 1]);
    return out;
  });
  return {
    sync,
    commitMs: dist(commits.filter((c) => !c.warm).map((c) => c.tCommit - c.tBegin)),
    figures: await collect(watchers, commits),
    machine,
    wallS: Math.round((now() - t0) / 100) / 10,
  };
}

/** The Claude Code plugin's watcher, or why it is skipped (noted in `stage.skipped`). */
async function claudeIfPossible(stage: Stage): Promise<Watcher | null> {
  const plugin: ClaudePlugin | { skip: string } = prepareClaudePlugin();
  if ("skip" in plugin) {
    stage.skipped["Claude Code iMessage plugin"] = plugin.skip;
    return null;
  }
  stage.session.own(plugin.dir);
  try {
    return await claudeWatcher(stage, plugin);
  } catch (err) {
    stage.skipped["Claude Code iMessage plugin"] = String(err).split("\n")[0] ?? String(err);
    return null;
  }
}

/** gw with notifications and webhooks, its observers, the peers and the floor; one sample loop per mode. */
export async function notifyPhase(stage: Stage): Promise<ModeResult[]> {
  const { watcherInfo, skipped } = stage;
  const watchers: Watcher[] = [];
  let sink: Sink | null = null;
  try {
    sink = await Sink.start(SECRET);
    const gw = await startGw(stage, "on", sink);
    watchers.push(gwWatcher(gw, sink));
    for (const make of GW_OBSERVERS) watchers.push(await make(stage, gw));
    watchers.push(await kitWatcher(stage));
    const claude = await claudeIfPossible(stage);
    if (claude) watchers.push(claude);
    watchers.push(await floorWatch(stage));
    for (const [name, why] of Object.entries(skipped)) progress(`SKIPPED ${name}: ${why}`);
    progress(`watchers: ${watchers.map((w) => w.name).join(", ")}`);
    const out: ModeResult[] = [];
    for (const sync of MODES) out.push(await notifyMode(stage, sync, watchers));
    for (const w of watchers) watcherInfo[w.name] = w.info();
    if (sink)
      watcherInfo.sink = { ...(await sink.count()), offsetMs: sink.offsetMs, offsetErrMs: sink.offsetErrMs };
    return out;
  } finally {
    for (const w of watchers) await w.stop();
    await sink?.stop();
  }
}

export interface PollResult {
  sync: SyncMode;
  commitMs: Dist;
  figures: Record<string, FigureResult>;
  machine: MachineLoad;
  wallS: number;
}

/**
 * gw with notifications off next to the bare poll loop: each commit at a fresh phase (golden ratio) of
 * gw's timer, after the previous one was listed.
 */
export async function pollPhase(stage: Stage): Promise<PollResult> {
  setSynchronous(stage.writer, POLL_SYNC);
  progress(
    `poll: gw with notifications off, ${POLL_MS} ms timer; ${POLL_WARMUP} warm-up + ${POLL_SAMPLES} commits`,
  );
  const watchers: Watcher[] = [];
  try {
    const gw = await startGw(stage, "off", null);
    watchers.push(gwWatcher(gw, null));
    const agent = await unreadPoller(stage, gw);
    watchers.push(agent, await floorPoll(stage));
    const phi = (Math.sqrt(5) - 1) / 2;
    const t0 = now();
    const [commits, machine] = await withMachineLoad(async () => {
      const out: Commit[] = [];
      for (let i = 0; i < POLL_WARMUP + POLL_SAMPLES; i++) {
        await Bun.sleep(Math.floor(((0.5 + i * phi) % 1) * POLL_MS));
        const c = commitOne(stage, `poll-${POLL_SYNC}`, i, i < POLL_WARMUP, watchers);
        out.push(c);
        // The next commit lands at a fresh phase of gw's timer: wait until this one was listed.
        const deadline = c.tCommit + STUCK_MS + 100;
        while (now() < deadline && !(await agent.hasSeen(c))) await Bun.sleep(1);
        if ((i - POLL_WARMUP + 1) % 40 === 0 && i >= POLL_WARMUP)
          progress(`  poll: ${i - POLL_WARMUP + 1}/${POLL_SAMPLES}`);
      }
      await settle(watchers, out[out.length - 1]);
      return out;
    });
    for (const w of watchers) stage.watcherInfo[`${w.name} (poll phase)`] = w.info();
    return {
      sync: POLL_SYNC,
      commitMs: dist(commits.filter((c) => !c.warm).map((c) => c.tCommit - c.tBegin)),
      figures: await collect(watchers, commits),
      machine,
      wallS: Math.round((now() - t0) / 100) / 10,
    };
  } finally {
    for (const w of watchers) await w.stop();
  }
}
