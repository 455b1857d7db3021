/**
 * bench/idle/idle.ts's processes, side by side on one chat.db: the writer holding it open (lib/messages-child.ts),
 * `gw serve` as the real command (and with webhooks on, and two what-ifs), imessage-kit's watcher, the
 * Claude Code plugin's server (skipped with a reason when it cannot run) and a bare Bun process. Each
 * measured one says how its pick-up of a new message is observed. Everything started is recorded in
 * `Started` as soon as it runs, so the caller's cleanup stops it even when a later start fails.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { spawnGw, stopGw, waitWhileRunning } from "../../test/helpers/process.ts";
import { gwEnvFor, peerEnvFor } from "../lib/chatdb.ts";
import { BARE_BUN, type Child, MESSAGES_CHILD, startChild } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import { type ClaudePlugin, prepareClaudePlugin } from "../lib/claude-plugin.ts";
import type { Session } from "../lib/session.ts";
import { PATH, SECRET, TOKEN } from "../lib/settings.ts";
import { Sink } from "../lib/sink.ts";
import { HERE, progress, WEBHOOKS, WHATIF } from "./settings.ts";

export interface Measured {
  name: string;
  role: "gw" | "whatif" | "peer" | "floor";
  pid: number;
  /** How its pick-up of a new message is observed: returns the sighting instant, on our clock, or null. */
  pickUp?: (text: string, deadline: number) => Promise<number | null>;
  stop(): Promise<void>;
}

/** The run's session, HOME of every process and the chat.db they share. */
export interface Scene {
  session: Session;
  dir: string;
  chatDbPath: string;
}

/** What has been started so far (for the cleanup) and why a peer was skipped. */
export interface Started {
  measured: Measured[];
  writer: Child | null;
  sink: Sink | null;
  skipped: Record<string, string>;
}

/** A peer's or the writer's process, ready and calibrated. */
const startReady = async (name: string, args: string[], env: Record<string, string>): Promise<Child> =>
  (await startChild(name, args, env)).child;

/** Polls GET /messages/unread every 1 ms until the message is listed; marks what it lists read. */
const unreadPickUp =
  (port: number, headers: Record<string, string>) =>
  async (text: string, deadline: number): Promise<number | null> => {
    while (now() < deadline) {
      const res = await fetch(`http://127.0.0.1:${port}/messages/unread?limit=100`, { headers });
      const t = now();
      const body = (await res.json()) as { messages: { id: string; text: string }[] };
      if (body.messages.some((m) => m.text === text)) {
        await fetch(`http://127.0.0.1:${port}/messages/mark_read`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ message_ids: body.messages.map((m) => m.id) }),
        });
        return t;
      }
      await Bun.sleep(1);
    }
    return null;
  };

/** One `gw serve` of the run: its name, its home under the scene, what its environment adds, its role. */
interface GwSpec {
  name: string;
  sub: string;
  extra?: Record<string, string>;
  role?: "gw" | "whatif";
  /** false: without the iMessage connector. */
  iMessage?: boolean;
}

/** `gw serve` from source, listening on a free port (read from its log line). */
async function startGwServe(scene: Scene, { name, sub, extra = {}, ...opts }: GwSpec): Promise<Measured> {
  const home = join(scene.dir, sub);
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {
    ...gwEnvFor(home, scene.chatDbPath),
    GW_ALLOWLIST_PATH: join(scene.dir, "allowlist.toml"),
    ...extra,
  };
  // Off macOS the iMessage connector runs only when GW_CHAT_DB_PATH is set.
  if (opts.iMessage === false) delete env.GW_CHAT_DB_PATH;
  const gw = spawnGw(["serve"], env);
  scene.session.track(gw.proc);
  const port = Number(
    await waitWhileRunning(
      gw,
      () => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(gw.output().stderr)?.[1],
      `${name}'s "listening" line`,
      60_000,
    ),
  );
  const headers = { authorization: `Bearer ${TOKEN}`, "x-agent-id": "bench-idle" };
  // One request before the settle period, as an agent that polls would have made: the route's first
  // call (handler and validator compilation, the first connection) is not part of a later pick-up.
  await (await fetch(`http://127.0.0.1:${port}/messages/unread?limit=100`, { headers })).json();
  return {
    name,
    role: opts.role ?? "gw",
    pid: gw.proc.pid,
    ...(opts.iMessage === false ? {} : { pickUp: unreadPickUp(port, headers) }),
    stop: async () => void (await stopGw(gw)),
  };
}

/** A child that reports `{"seen":text,"t"}`: its sighting, on our clock. */
const seenBy = (child: Child) => async (text: string, deadline: number) => {
  const m = await child
    .waitFor((x) => x.seen === text, Math.max(1, deadline - now()), text)
    .catch(() => null);
  return m ? (m.t as number) - child.offsetMs : null;
};

/** Every gw: the default one, with webhooks on (BENCH_IDLE_WEBHOOKS), the what-ifs (BENCH_IDLE_WHATIF). */
async function startGws(scene: Scene, s: Started): Promise<void> {
  s.measured.push(await startGwServe(scene, { name: "gw serve", sub: "gw" }));
  if (WEBHOOKS) {
    s.sink = await Sink.start(SECRET);
    const extra = { GW_WEBHOOK_URL: s.sink.url, GW_WEBHOOK_SECRET: SECRET };
    s.measured.push(await startGwServe(scene, { name: "gw serve (webhooks on)", sub: "gw-webhooks", extra }));
  }
  if (WHATIF) {
    const timer60 = { GW_DEVICE_POLL_INTERVAL_MS: "60000" };
    s.measured.push(
      await startGwServe(scene, {
        name: "gw serve, iMessage timer 60 s (what-if)",
        sub: "gw-timer60",
        extra: timer60,
        role: "whatif",
      }),
      await startGwServe(scene, {
        name: "gw serve, no iMessage connector (what-if)",
        sub: "gw-nodevice",
        role: "whatif",
        iMessage: false,
      }),
    );
  }
}

/** The Claude Code plugin's server process, or why it is skipped. */
async function startClaude(scene: Scene, s: Started): Promise<void> {
  const plugin: ClaudePlugin | { skip: string } = prepareClaudePlugin();
  if ("skip" in plugin) {
    s.skipped["Claude Code iMessage plugin"] = plugin.skip;
    return;
  }
  scene.session.own(plugin.dir);
  try {
    const claude = await startReady("claude-plugin", [join(HERE, "../pickup/channel.ts"), "claude"], {
      ...peerEnvFor(scene.dir, scene.chatDbPath),
      BENCH_CLAUDE_SERVER: plugin.server,
      BENCH_CLAUDE_STATE: plugin.stateDir,
    });
    const ready = claude.msgs.find((m) => "ready" in m);
    s.measured.push({
      name: "Claude Code iMessage plugin (server)",
      role: "peer",
      pid: Number(ready?.pluginPid),
      pickUp: seenBy(claude),
      stop: () => claude.stop(),
    });
  } catch (err) {
    s.skipped["Claude Code iMessage plugin"] = String(err).split("\n")[0] ?? String(err);
  }
}

/** The writer, every gw, the peers and the bare Bun process, in that order. */
export async function startAll(scene: Scene, s: Started): Promise<void> {
  s.writer = await startReady("writer", [MESSAGES_CHILD], {
    PATH,
    BENCH_CHAT_DB: scene.chatDbPath,
  });
  await startGws(scene, s);
  const kit = await startReady(
    "imessage-kit",
    [join(HERE, "../pickup/kit.ts")],
    peerEnvFor(scene.dir, scene.chatDbPath),
  );
  s.measured.push({
    name: "imessage-kit 3.0.0",
    role: "peer",
    pid: kit.proc.pid,
    pickUp: seenBy(kit),
    stop: () => kit.stop(),
  });
  await startClaude(scene, s);
  const bare = Bun.spawn([process.execPath, BARE_BUN], {
    env: { PATH },
    stdin: "pipe",
    stdout: "ignore",
    stderr: "inherit",
  });
  scene.session.track(bare);
  s.measured.push({
    name: "bare Bun process",
    role: "floor",
    pid: bare.pid,
    async stop() {
      bare.stdin.end();
      await bare.exited;
    },
  });
  for (const [name, why] of Object.entries(s.skipped)) progress(`SKIPPED ${name}: ${why}`);
}
