/**
 * bench/pickup/pickup.ts's watchers: each one a process (lib/child.ts) yielding one or more figures, each
 * figure a list of sightings [key, instant on our clock] tied to commits by text, by ROWID or as the
 * first event after a commit began. Here gw (gw.ts, its ingest commit stamped inside it and the
 * signed webhook's arrival at the sink) and gw's observers, started once gw listens: the agent polling
 * unread, the agent following the long poll, `gw mcp --channel`. The peers and floors: peers.ts.
 */
import { join } from "node:path";
import { gwEnvFor } from "../lib/chatdb.ts";
import { type Child, startChild } from "../lib/child.ts";
import { PATH, SECRET, TOKEN } from "../lib/settings.ts";
import type { Sink } from "../lib/sink.ts";
import { HERE, POLL_MS, STEP_MS, STUCK_MS } from "./settings.ts";

/** Where every watcher of the run looks: HOME, with chat.db where Messages keeps it. */
export interface Scene {
  dir: string;
  chatDbPath: string;
}

export interface Commit {
  text: string;
  rowid: number;
  tBegin: number;
  tCommit: number;
  warm: boolean;
}

export type Role = "gw" | "peer" | "floor";
/** How a figure's sightings are tied to commits: by message text, by a ROWID ≥ the commit's, or as the first event after the commit began. */
export type Match = "text" | "rowid" | "event";
export interface FigureSpec {
  id: string;
  label: string;
  role: Role;
  match: Match;
}
export const figure = (id: string, role: Role, label: string, match: Match = "text"): FigureSpec => ({
  id,
  label,
  role,
  match,
});
/** A figure's sightings: [key, instant on this process's clock]. */
export type Sightings = Map<string, [key: string | number, t: number][]>;

export interface Watcher {
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
export const startWatcher = async (
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<Child> => (await startChild(name, args, env)).child;

export const offsets = (c: Child) => ({
  offsetMs: Math.round(c.offsetMs * 1000) / 1000,
  offsetErrMs: Math.round(c.offsetErrMs * 1000) / 1000,
});

/** `{"seen":key,"t":…}` lines of a child, on our clock. */
export const seenLines = (c: Child, field = "t"): [string | number, number][] =>
  c.msgs
    .filter((m) => "seen" in m && typeof m[field] === "number")
    .map((m) => [m.seen as string | number, (m[field] as number) - c.offsetMs]);

export const textSeen = (c: Child, text: string) => c.msgs.some((m) => m.seen === text || m.stuck === text);
export const rowidSeen = (c: Child, rowid: number) =>
  c.msgs.some((m) => typeof m.seen === "number" && m.seen >= rowid);

export const errorsOf = (c: Child) => c.msgs.filter((m) => "error" in m).map((m) => m.error);

/** A watcher whose process reports one figure as `seen` lines, tied to commits by text or by ROWID. */
export function childWatcher(
  child: Child,
  name: string,
  figure: FigureSpec,
  info: () => Record<string, unknown> = () => ({}),
): Watcher {
  return {
    name,
    figures: [figure],
    hasSeen: async (c) => (figure.match === "rowid" ? rowidSeen(child, c.rowid) : textSeen(child, c.text)),
    sightings: async () => new Map([[figure.id, seenLines(child)]]),
    stop: () => child.stop(),
    info: () => ({ ...offsets(child), ...info() }),
  };
}

export interface Gw {
  child: Child;
  port: number;
}

/** A gw client's environment: gw's port and this run's bearer. */
const clientEnv = (gw: Gw) => ({ PATH, BENCH_GW_PORT: String(gw.port), BENCH_TOKEN: TOKEN });

export async function startGw(scene: Scene, mode: "on" | "off", sink: Sink | null): Promise<Gw> {
  const env = {
    ...gwEnvFor(scene.dir, scene.chatDbPath),
    GW_DEVICE_POLL_INTERVAL_MS: String(POLL_MS),
    ...(sink ? { GW_WEBHOOK_URL: sink.url, GW_WEBHOOK_SECRET: SECRET } : {}),
  };
  const { child, ready } = await startChild(`gw(${mode})`, [join(HERE, "gw.ts"), mode], env);
  return { child, port: ready.ready as number };
}

/** gw itself: the ingest commit stamped inside it and, with a sink, the signed webhook's arrival. */
export function gwWatcher(gw: Gw, sink: Sink | null): Watcher {
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
export async function unreadPoller(_scene: Scene, gw: Gw): Promise<Watcher> {
  const child = await startWatcher("agent(poll unread)", [join(HERE, "agent.ts")], {
    ...clientEnv(gw),
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
    info: () => ({ ...offsets(child), stepMs: STEP_MS, errors: errorsOf(child) }),
  };
}

/** An agent following gw with the unread long poll (`wait=30`), in its own process. */
export async function longPoller(_scene: Scene, gw: Gw): Promise<Watcher> {
  const child = await startWatcher("agent(long poll)", [join(HERE, "longpoll.ts")], clientEnv(gw));
  return childWatcher(
    child,
    "agent long-polling unread",
    figure("gw.longpoll", "gw", "gw: long poll (unread?wait=30) answered"),
    () => ({ errors: errorsOf(child) }),
  );
}

/** `gw mcp --channel` started as Claude Code starts it, with the MCP SDK client timestamping its pushes. */
export async function gwChannel(scene: Scene, gw: Gw): Promise<Watcher> {
  const child = await startWatcher("gw mcp --channel", [join(HERE, "channel.ts"), "gw"], {
    ...clientEnv(gw),
    HOME: scene.dir,
    BENCH_AGENT_ID: "bench-channel",
  });
  return childWatcher(
    child,
    "gw mcp --channel",
    figure("gw.channel", "gw", "gw mcp --channel: notifications/claude/channel"),
  );
}

/** gw's agents, each its own process, started once gw listens; each yields its own figure. */
export const GW_OBSERVERS: ((scene: Scene, gw: Gw) => Promise<Watcher>)[] = [
  unreadPoller,
  longPoller,
  gwChannel,
];
