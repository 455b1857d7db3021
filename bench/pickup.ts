/**
 * Benchmark: chat.db commit → an agent sees the message, for gw and for the real peers and floors
 * watching the same chat.db at the same time, each in its own process.
 *
 *   bun run bench pickup          (or: bun run bench/pickup.ts)
 *
 * This script plays Messages: it writes rows into ONE chat.db with openChatDbWriter (WAL, one
 * transaction per message) at seeded random gaps of BENCH_GAP_MIN_MS–BENCH_GAP_MAX_MS, whatever the
 * watchers do. Watchers (see WATCHERS below; each one is a process and yields one or more figures):
 * - gw (bench/pickup-gw.ts), built as `gw serve` builds it, with webhooks to bench/webhooks-sink.ts and
 *   its ingest commits stamped in gw (lib/gw-child.ts traceIngest);
 * - gw's observers, started once gw listens (GW_OBSERVERS): the agent polling GET /messages/unread every
 *   BENCH_STEP_MS and marking read (bench/pickup-agent.ts); an agent following the unread long poll
 *   (bench/pickup-longpoll.ts); `gw mcp --channel` driven by the MCP SDK Client as Claude Code drives a
 *   channel (bench/pickup-channel.ts gw);
 * - @photon-ai/imessage-kit 3.0.0's watcher (bench/pickup-kit.ts);
 * - the Claude Code iMessage plugin, run from a local snapshot and driven by the MCP SDK Client
 *   (bench/pickup-channel.ts claude, lib/claude-plugin.ts; skipped with a line when it cannot run);
 * - the floor: a bare fs.watch on chat.db's directory (bench/pickup-raw.ts watch).
 * Phase "notify" runs the sample loop once per writer `PRAGMA synchronous` mode (BENCH_SYNC, NORMAL then
 * FULL) on the same processes: BENCH_WARMUP untimed commits, then BENCH_SAMPLES timed ones; a row not
 * seen by a figure within BENCH_STUCK_MS of its commit is stuck. Phase "poll": gw with notifications off
 * (GW_DEVICE_POLL_INTERVAL_MS = BENCH_POLL_MS) next to a bare `PRAGMA data_version` + `MAX(ROWID)` loop at
 * the same interval (bench/pickup-raw.ts poll); BENCH_POLL_SAMPLES commits, each after the previous one
 * was listed, at golden-ratio phases of the interval.
 *
 * Latency = sighting − commit, where commit is the instant writer.message() returned (COMMIT done) and a
 * child's stamp (timeOrigin + performance.now()) is corrected by its clock offset, measured with 25 pings
 * (lib/child.ts; the sink over HTTP, lib/sink.ts). Method, setup of each peer and figures:
 * bench/pickup-idle.md. Prints tables, the verdicts and the report JSON line (lib/report.ts) on stdout,
 * progress on stderr. Environment: BENCH_SAMPLES (200), BENCH_WARMUP (10), BENCH_GAP_MIN_MS (50),
 * BENCH_GAP_MAX_MS (400), BENCH_STEP_MS (1), BENCH_STUCK_MS (5000), BENCH_SYNC (NORMAL,FULL),
 * BENCH_PHASES (notify,poll), BENCH_POLL_MS (1000), BENCH_POLL_SAMPLES (120), BENCH_SEED (1),
 * BENCH_KEEP (0), BENCH_CLAUDE_PLUGIN_GIT (the snapshot's bare git dir).
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import {
  chatDbPathIn,
  FRIEND,
  FRIEND_CHAT,
  GW_ALLOWLIST,
  gwEnvFor,
  openBenchChatDb,
  type SyncMode,
  setSynchronous,
} from "./lib/chatdb.ts";
import { type Child, startChild } from "./lib/child.ts";
import { now } from "./lib/child-protocol.ts";
import { type ClaudePlugin, prepareClaudePlugin } from "./lib/claude-plugin.ts";
import { type MachineLoad, withMachineLoad } from "./lib/machine.ts";
import { report, type SummaryRow } from "./lib/report.ts";
import { startSession } from "./lib/session.ts";
import { Sink } from "./lib/sink.ts";
import { type Dist, dist, intEnv, mulberry32 } from "./lib/stats.ts";

// ---------------------------------------------------------------------------------------------------
// Configuration

const SAMPLES = intEnv("BENCH_SAMPLES", 200, 1);
const WARMUP = intEnv("BENCH_WARMUP", 10, 0);
const GAP_MIN_MS = intEnv("BENCH_GAP_MIN_MS", 50, 0);
const GAP_MAX_MS = intEnv("BENCH_GAP_MAX_MS", 400, GAP_MIN_MS);
const STEP_MS = intEnv("BENCH_STEP_MS", 1, 0);
const STUCK_MS = intEnv("BENCH_STUCK_MS", 5000, 100);
const POLL_MS = intEnv("BENCH_POLL_MS", 1000, 10);
const POLL_SAMPLES = intEnv("BENCH_POLL_SAMPLES", 120, 1);
const POLL_WARMUP = Math.min(WARMUP, 3);
const SEED = intEnv("BENCH_SEED", 1, 0);
const KEEP = intEnv("BENCH_KEEP", 0, 0) === 1;
const list = (name: string, fallback: string) =>
  (process.env[name] || fallback)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
const MODES = list("BENCH_SYNC", "NORMAL,FULL").map((m) => m.toUpperCase()) as SyncMode[];
for (const m of MODES) if (m !== "NORMAL" && m !== "FULL") throw new Error(`BENCH_SYNC: unknown mode ${m}`);
const PHASES = new Set(list("BENCH_PHASES", "notify,poll"));
for (const p of PHASES)
  if (p !== "notify" && p !== "poll") throw new Error(`BENCH_PHASES: unknown phase ${p}`);
/** The writer's mode in the poll phase (SQLite's default, and what openChatDbWriter leaves). */
const POLL_SYNC: SyncMode = "FULL";
const TARGET = { p50: 5, p99: 30, overMs: 50, pollSlackMs: 100 };
const TARGET_TEXT = `p50 ≤ ${TARGET.p50} ms, p99 ≤ ${TARGET.p99} ms, 0 over ${TARGET.overMs} ms, 0 stuck`;
/** The live-push targets (issue: live-push): long poll answered and channel notification received. */
const LIVE_TARGET = { p50: 10, p99: 40 };
const LIVE_TARGET_TEXT = `p50 ≤ ${LIVE_TARGET.p50} ms, p99 ≤ ${LIVE_TARGET.p99} ms, 0 stuck`;

const HERE = import.meta.dir;
const progress = (s: string) => process.stderr.write(`[pickup] ${s}\n`);
const startedAt = performance.now();
const random = mulberry32(SEED);
const TOKEN = `bench-${crypto.randomUUID()}`;
const SECRET = `whsec-${crypto.randomUUID()}`;
const PATH = process.env.PATH ?? "/usr/bin:/bin";

const session = startSession(progress, KEEP);
/** HOME of every watcher; chat.db sits where Messages keeps it. */
const dir = session.tempDir("gw-bench-pickup-");
const chatDbPath = chatDbPathIn(dir);
writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);

// ---------------------------------------------------------------------------------------------------
// Watchers and their figures

interface Commit {
  text: string;
  rowid: number;
  tBegin: number;
  tCommit: number;
  warm: boolean;
}

type Role = "gw" | "peer" | "floor";
/** How a figure's sightings are tied to commits: by message text, by a ROWID ≥ the commit's, or as the first event after the commit began. */
type Match = "text" | "rowid" | "event";
interface FigureSpec {
  id: string;
  label: string;
  role: Role;
  match: Match;
}
/** A figure's sightings: [key, instant on this process's clock]. */
type Sightings = Map<string, [key: string | number, t: number][]>;

interface Watcher {
  name: string;
  figures: FigureSpec[];
  onCommit?(c: Commit): void;
  /** Whether each of its figures has seen this commit (ends the bounded wait after a phase). */
  hasSeen(c: Commit): Promise<boolean>;
  sightings(): Promise<Sightings>;
  stop(): Promise<void>;
  info(): Record<string, unknown>;
}

/** A watcher's process, ready and calibrated. */
const startWatcher = async (name: string, args: string[], env: Record<string, string>): Promise<Child> =>
  (await startChild(name, args, env)).child;

const offsets = (c: Child) => ({
  offsetMs: Math.round(c.offsetMs * 1000) / 1000,
  offsetErrMs: Math.round(c.offsetErrMs * 1000) / 1000,
});

/** `{"seen":key,"t":…}` lines of a child, on our clock. */
const seenLines = (c: Child, field = "t"): [string | number, number][] =>
  c.msgs
    .filter((m) => "seen" in m && typeof m[field] === "number")
    .map((m) => [m.seen as string | number, (m[field] as number) - c.offsetMs]);

const textSeen = (c: Child, text: string) => c.msgs.some((m) => m.seen === text || m.stuck === text);
const rowidSeen = (c: Child, rowid: number) =>
  c.msgs.some((m) => typeof m.seen === "number" && m.seen >= rowid);

interface Gw {
  child: Child;
  port: number;
}

async function startGw(mode: "on" | "off", sink: Sink | null): Promise<Gw> {
  const env = {
    ...gwEnvFor(dir, chatDbPath, TOKEN),
    GW_DEVICE_POLL_INTERVAL_MS: String(POLL_MS),
    ...(sink ? { GW_WEBHOOK_URL: sink.url, GW_WEBHOOK_SECRET: SECRET } : {}),
  };
  const { child, ready } = await startChild(`gw(${mode})`, [join(HERE, "pickup-gw.ts"), mode], env);
  return { child, port: ready.ready as number };
}

/** gw itself: the ingest commit stamped inside it and, with a sink, the signed webhook's arrival. */
function gwWatcher(gw: Gw, sink: Sink | null): Watcher {
  const stamps = async () => (await gw.child.request({ cmd: "stamps" })).ingested as [string, number][];
  const webhooks = async (): Promise<[string, number][]> => {
    if (!sink) return [];
    const rows = (await gw.child.request({ cmd: "deliveries" })).rows as [string, string][];
    const { byId } = await sink.arrivals();
    return rows.flatMap(([id, text]) => {
      const t = byId.get(id);
      return t === undefined ? [] : [[text, t] as [string, number]];
    });
  };
  return {
    name: "gw",
    figures: [
      { id: "gw.ingest", label: "gw: ingest committed (stamped in gw)", role: "gw", match: "text" },
      ...(sink
        ? [
            {
              id: "gw.webhook",
              label: "gw: signed webhook received",
              role: "gw" as Role,
              match: "text" as Match,
            },
          ]
        : []),
    ],
    async hasSeen(c) {
      if (!(await stamps()).some(([text]) => text === c.text)) return false;
      return !sink || (await webhooks()).some(([text]) => text === c.text);
    },
    async sightings() {
      const s: Sightings = new Map();
      s.set(
        "gw.ingest",
        (await stamps()).map(([text, t]) => [text, t - gw.child.offsetMs]),
      );
      if (sink) s.set("gw.webhook", await webhooks());
      return s;
    },
    stop: () => gw.child.stop(),
    info: () => ({
      ...offsets(gw.child),
      ...(sink ? { sinkOffsetMs: sink.offsetMs, sinkOffsetErrMs: sink.offsetErrMs } : {}),
    }),
  };
}

/** The agent polling GET /messages/unread every BENCH_STEP_MS while a message is expected, marking read. */
async function unreadPoller(gw: Gw): Promise<Watcher> {
  const child = await startWatcher("agent(poll unread)", [join(HERE, "pickup-agent.ts")], {
    PATH,
    BENCH_GW_PORT: String(gw.port),
    BENCH_TOKEN: TOKEN,
    BENCH_STEP_MS: String(STEP_MS),
    BENCH_STUCK_MS: String(STUCK_MS),
  });
  return {
    name: "agent polling unread",
    figures: [
      { id: "gw.unread", label: "gw: listed by GET /messages/unread", role: "gw", match: "text" },
      {
        id: "gw.unreadLower",
        label: "gw: last unread answer without it (sent)",
        role: "gw",
        match: "text",
      },
    ],
    onCommit: (c) => void child.send({ cmd: "expect", text: c.text }),
    hasSeen: async (c) => textSeen(child, c.text),
    sightings: async () =>
      new Map([
        ["gw.unread", seenLines(child)],
        ["gw.unreadLower", seenLines(child, "tMiss")],
      ]),
    stop: () => child.stop(),
    info: () => {
      const errors = child.msgs.filter((m) => "error" in m).map((m) => m.error);
      return { ...offsets(child), stepMs: STEP_MS, errors };
    },
  };
}

/** An agent following gw with the unread long poll (`wait=30`), in its own process. */
async function longPoller(gw: Gw): Promise<Watcher> {
  const child = await startWatcher("agent(long poll)", [join(HERE, "pickup-longpoll.ts")], {
    PATH,
    BENCH_GW_PORT: String(gw.port),
    BENCH_TOKEN: TOKEN,
  });
  return {
    name: "agent long-polling unread",
    figures: [
      { id: "gw.longpoll", label: "gw: long poll (unread?wait=30) answered", role: "gw", match: "text" },
    ],
    hasSeen: async (c) => textSeen(child, c.text),
    sightings: async () => new Map([["gw.longpoll", seenLines(child)]]),
    stop: () => child.stop(),
    info: () => ({ ...offsets(child), errors: child.msgs.filter((m) => "error" in m).map((m) => m.error) }),
  };
}

/** `gw mcp --channel` started as Claude Code starts it, with the MCP SDK client timestamping its pushes. */
async function gwChannel(gw: Gw): Promise<Watcher> {
  const child = await startWatcher("gw mcp --channel", [join(HERE, "pickup-channel.ts"), "gw"], {
    PATH,
    HOME: dir,
    BENCH_GW_PORT: String(gw.port),
    BENCH_TOKEN: TOKEN,
    BENCH_AGENT_ID: "bench-channel",
  });
  return {
    name: "gw mcp --channel",
    figures: [
      {
        id: "gw.channel",
        label: "gw mcp --channel: notifications/claude/channel",
        role: "gw",
        match: "text",
      },
    ],
    hasSeen: async (c) => textSeen(child, c.text),
    sightings: async () => new Map([["gw.channel", seenLines(child)]]),
    stop: () => child.stop(),
    info: () => offsets(child),
  };
}

/** gw's agents, each its own process, started once gw listens; each yields its own figure. */
const GW_OBSERVERS: ((gw: Gw) => Promise<Watcher>)[] = [unreadPoller, longPoller, gwChannel];

async function kitWatcher(): Promise<Watcher> {
  const child = await startWatcher("imessage-kit", [join(HERE, "pickup-kit.ts")], {
    PATH,
    HOME: dir,
    BENCH_CHAT_DB: chatDbPath,
  });
  return {
    name: "imessage-kit",
    figures: [
      {
        id: "peer.kit",
        label: "imessage-kit 3.0.0: onIncomingMessage (fs.watch on -wal)",
        role: "peer",
        match: "text",
      },
    ],
    hasSeen: async (c) => textSeen(child, c.text),
    sightings: async () => new Map([["peer.kit", seenLines(child)]]),
    stop: () => child.stop(),
    info: () => ({ ...offsets(child), errors: child.msgs.filter((m) => "error" in m).map((m) => m.error) }),
  };
}

async function claudeWatcher(plugin: ClaudePlugin): Promise<Watcher> {
  const child = await startWatcher("claude-plugin", [join(HERE, "pickup-channel.ts"), "claude"], {
    PATH,
    HOME: dir,
    BENCH_CHAT_DB: chatDbPath,
    BENCH_CLAUDE_SERVER: plugin.server,
    BENCH_CLAUDE_STATE: plugin.stateDir,
  });
  return {
    name: "Claude Code iMessage plugin",
    figures: [
      {
        id: "peer.claude",
        label: "Claude Code plugin: notifications/claude/channel (1 s poll)",
        role: "peer",
        match: "text",
      },
    ],
    hasSeen: async (c) => textSeen(child, c.text),
    sightings: async () => new Map([["peer.claude", seenLines(child)]]),
    stop: () => child.stop(),
    info: () => ({ ...offsets(child), snapshot: plugin.commit }),
  };
}

async function floorWatch(): Promise<Watcher> {
  const child = await startWatcher("floor(fs.watch)", [join(HERE, "pickup-raw.ts"), "watch", chatDbPath], {
    PATH,
  });
  return {
    name: "floor: fs.watch",
    figures: [
      { id: "floor.event", label: "floor: fs.watch first event", role: "floor", match: "event" },
      {
        id: "floor.readable",
        label: "floor: fs.watch + 1 ms re-check, row readable",
        role: "floor",
        match: "rowid",
      },
    ],
    hasSeen: async (c) => rowidSeen(child, c.rowid),
    sightings: async () =>
      new Map([
        [
          "floor.event",
          child.msgs
            .filter((m) => typeof m.event === "number")
            .map((m) => [0, (m.event as number) - child.offsetMs] as [number, number]),
        ],
        ["floor.readable", seenLines(child)],
      ]),
    stop: () => child.stop(),
    info: () => offsets(child),
  };
}

async function floorPoll(): Promise<Watcher> {
  const child = await startWatcher(
    "floor(poll)",
    [join(HERE, "pickup-raw.ts"), "poll", chatDbPath, String(POLL_MS)],
    { PATH },
  );
  return {
    name: "floor: poll loop",
    figures: [
      {
        id: "floor.poll",
        label: `floor: data_version + MAX(ROWID) every ${POLL_MS} ms`,
        role: "floor",
        match: "rowid",
      },
    ],
    hasSeen: async (c) => rowidSeen(child, c.rowid),
    sightings: async () => new Map([["floor.poll", seenLines(child)]]),
    stop: () => child.stop(),
    info: () => offsets(child),
  };
}

// ---------------------------------------------------------------------------------------------------
// Matching sightings to commits

interface FigureResult {
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

async function collect(watchers: readonly Watcher[], commits: readonly Commit[]) {
  const figures: Record<string, FigureResult> = {};
  for (const w of watchers) {
    const s = await w.sightings();
    for (const spec of w.figures) figures[spec.id] = summarise(commits, spec, s.get(spec.id) ?? []);
  }
  return figures;
}

/** After the last commit: until every watcher saw it, or BENCH_STUCK_MS after it. */
async function settle(watchers: readonly Watcher[], last: Commit | undefined): Promise<void> {
  if (!last) return;
  const deadline = last.tCommit + STUCK_MS + 100;
  while (now() < deadline) {
    const seen = await Promise.all(watchers.map((w) => w.hasSeen(last)));
    if (seen.every(Boolean)) return;
    await Bun.sleep(10);
  }
}

// ---------------------------------------------------------------------------------------------------
// Phases

const writer = openBenchChatDb(chatDbPath);
const nonce = crypto.randomUUID().slice(0, 8);

function commitOne(label: string, i: number, warm: boolean, watchers: readonly Watcher[]): Commit {
  const text = `pickup ${label} ${nonce} #${i}`;
  const tBegin = now();
  const { rowid } = writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
  const tCommit = now();
  const c = { text, rowid, tBegin, tCommit, warm };
  for (const w of watchers) w.onCommit?.(c);
  return c;
}

interface ModeResult {
  sync: SyncMode;
  commitMs: Dist;
  figures: Record<string, FigureResult>;
  machine: MachineLoad;
  wallS: number;
}

async function notifyMode(sync: SyncMode, watchers: readonly Watcher[]): Promise<ModeResult> {
  setSynchronous(writer, sync);
  progress(
    `notify, synchronous=${sync}: ${WARMUP} warm-up + ${SAMPLES} commits, gaps ${GAP_MIN_MS}–${GAP_MAX_MS} ms`,
  );
  const t0 = now();
  const [commits, machine] = await withMachineLoad(async () => {
    const out: Commit[] = [];
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      await Bun.sleep(GAP_MIN_MS + Math.floor(random() * (GAP_MAX_MS - GAP_MIN_MS + 1)));
      out.push(commitOne(sync, i, i < WARMUP, watchers));
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

const watcherInfo: Record<string, unknown> = {};
const skipped: Record<string, string> = {};

async function notifyPhase(): Promise<ModeResult[]> {
  const watchers: Watcher[] = [];
  let plugin: ClaudePlugin | { skip: string } | null = null;
  let sink: Sink | null = null;
  try {
    sink = await Sink.start(SECRET);
    const gw = await startGw("on", sink);
    watchers.push(gwWatcher(gw, sink));
    for (const make of GW_OBSERVERS) watchers.push(await make(gw));
    watchers.push(await kitWatcher());
    plugin = prepareClaudePlugin();
    if ("skip" in plugin) skipped["Claude Code iMessage plugin"] = plugin.skip;
    else {
      session.own(plugin.dir);
      try {
        watchers.push(await claudeWatcher(plugin));
      } catch (err) {
        skipped["Claude Code iMessage plugin"] = String(err).split("\n")[0] ?? String(err);
      }
    }
    watchers.push(await floorWatch());
    for (const [name, why] of Object.entries(skipped)) progress(`SKIPPED ${name}: ${why}`);
    progress(`watchers: ${watchers.map((w) => w.name).join(", ")}`);
    const out: ModeResult[] = [];
    for (const sync of MODES) out.push(await notifyMode(sync, watchers));
    for (const w of watchers) watcherInfo[w.name] = w.info();
    if (sink)
      watcherInfo.sink = { ...(await sink.count()), offsetMs: sink.offsetMs, offsetErrMs: sink.offsetErrMs };
    return out;
  } finally {
    for (const w of watchers) await w.stop();
    await sink?.stop();
  }
}

interface PollResult {
  sync: SyncMode;
  commitMs: Dist;
  figures: Record<string, FigureResult>;
  machine: MachineLoad;
  wallS: number;
}

async function pollPhase(): Promise<PollResult> {
  setSynchronous(writer, POLL_SYNC);
  progress(
    `poll: gw with notifications off, ${POLL_MS} ms timer; ${POLL_WARMUP} warm-up + ${POLL_SAMPLES} commits`,
  );
  const watchers: Watcher[] = [];
  try {
    const gw = await startGw("off", null);
    watchers.push(gwWatcher(gw, null));
    const agent = await unreadPoller(gw);
    watchers.push(agent, await floorPoll());
    const phi = (Math.sqrt(5) - 1) / 2;
    const t0 = now();
    const [commits, machine] = await withMachineLoad(async () => {
      const out: Commit[] = [];
      for (let i = 0; i < POLL_WARMUP + POLL_SAMPLES; i++) {
        await Bun.sleep(Math.floor(((0.5 + i * phi) % 1) * POLL_MS));
        const c = commitOne(`poll-${POLL_SYNC}`, i, i < POLL_WARMUP, watchers);
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
    for (const w of watchers) watcherInfo[`${w.name} (poll phase)`] = w.info();
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

// ---------------------------------------------------------------------------------------------------
// Main

progress(`work dir ${dir}`);
const load1 = loadavg()[0] ?? 0;
if (load1 > 0.5)
  progress(`warning: 1-min load average is ${load1.toFixed(2)}: other work shares these cores`);
let modes: ModeResult[] = [];
let poll: PollResult | null = null;
try {
  if (PHASES.has("notify")) modes = await notifyPhase();
  if (PHASES.has("poll")) poll = await pollPhase();
} finally {
  writer.close();
  session.cleanup();
}

// ---------------------------------------------------------------------------------------------------
// Report

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

const summary: SummaryRow[] = [];
for (const m of modes) {
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
}
if (poll) {
  const r = poll.figures["gw.unread"];
  const floor = poll.figures["floor.poll"];
  const limit = POLL_MS + TARGET.pollSlackMs;
  summary.push({
    figure: `notifications off (${POLL_MS} ms timer): commit → listed by GET /messages/unread, max (ratio: max ÷ floor max)`,
    value: full(r),
    baseline: `bare data_version + MAX(ROWID) loop every ${POLL_MS} ms: ${pp(floor)}; ${floor?.stuck ?? "?"} stuck`,
    ratio:
      r && floor && floor.latency.max > 0
        ? Math.round((r.latency.max / floor.latency.max) * 100) / 100
        : null,
    target: `max ≤ ${limit} ms (interval + ${TARGET.pollSlackMs}), 0 stuck`,
    pass: r !== undefined && r.n > 0 && r.stuck === 0 && r.latency.max <= limit,
  });
}

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
    watchers: watcherInfo,
    skipped,
  },
});
