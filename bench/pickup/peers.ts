/**
 * bench/pickup/pickup.ts's peers and floors, each watching the same chat.db in its own process:
 * @photon-ai/imessage-kit 3.0.0's watcher (kit.ts), the Claude Code iMessage plugin driven by the
 * MCP SDK client (channel.ts claude), a bare fs.watch on chat.db's directory and a bare
 * `data_version` + MAX(ROWID) poll loop (raw.ts).
 */
import { join } from "node:path";
import { peerEnvFor } from "../lib/chatdb.ts";
import type { ClaudePlugin } from "../lib/claude-plugin.ts";
import { PATH } from "../lib/settings.ts";
import { HERE, POLL_MS } from "./settings.ts";
import {
  childWatcher,
  errorsOf,
  figure,
  offsets,
  rowidSeen,
  type Scene,
  seenLines,
  startWatcher,
  type Watcher,
} from "./watchers.ts";

export async function kitWatcher(scene: Scene): Promise<Watcher> {
  const child = await startWatcher(
    "imessage-kit",
    [join(HERE, "kit.ts")],
    peerEnvFor(scene.dir, scene.chatDbPath),
  );
  return childWatcher(
    child,
    "imessage-kit",
    figure("peer.kit", "peer", "imessage-kit 3.0.0: onIncomingMessage (fs.watch on -wal)"),
    () => ({ errors: errorsOf(child) }),
  );
}

export async function claudeWatcher(scene: Scene, plugin: ClaudePlugin): Promise<Watcher> {
  const child = await startWatcher("claude-plugin", [join(HERE, "channel.ts"), "claude"], {
    ...peerEnvFor(scene.dir, scene.chatDbPath),
    BENCH_CLAUDE_SERVER: plugin.server,
    BENCH_CLAUDE_STATE: plugin.stateDir,
  });
  return childWatcher(
    child,
    "Claude Code iMessage plugin",
    figure("peer.claude", "peer", "Claude Code plugin: notifications/claude/channel (1 s poll)"),
    () => ({ snapshot: plugin.commit }),
  );
}

export async function floorWatch(scene: Scene): Promise<Watcher> {
  const child = await startWatcher("floor(fs.watch)", [join(HERE, "raw.ts"), "watch", scene.chatDbPath], {
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

export async function floorPoll(scene: Scene): Promise<Watcher> {
  const child = await startWatcher(
    "floor(poll)",
    [join(HERE, "raw.ts"), "poll", scene.chatDbPath, String(POLL_MS)],
    { PATH },
  );
  return childWatcher(
    child,
    "floor: poll loop",
    figure("floor.poll", "floor", `floor: data_version + MAX(ROWID) every ${POLL_MS} ms`, "rowid"),
  );
}
