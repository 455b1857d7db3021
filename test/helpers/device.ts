/**
 * A service wired exactly as `gw serve` wires it (createService + buildConnectors with the real
 * iMessage connector and the real spawner), reading a chat.db written by the Messages-like writer and
 * sending through the Messages stand-in program (`src/main.ts __messages-standin`) as GW_OSASCRIPT_PATH.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { formatProblems, loadConfig } from "../../src/config/load.ts";
import { type Clock, systemClock } from "../../src/core/ports.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import type { ServicePorts } from "../../src/service.ts";
import { chatDbOfRelease, type ReleaseName } from "./chatdb-releases.ts";
import { recordingLogger } from "./logger.ts";
import { freePort, isolatedEnv, standInProgram } from "./process.ts";

import { ALLOWLIST, closeAtEnd, makeRequest, startWired, TOKEN } from "./service.ts";
import { tempDir } from "./temp.ts";

export const FRIEND = "+15555550100";
export const STRANGER = "+15555550199";
export const FRIEND_CHAT = `any;-;${FRIEND}`;
export const STRANGER_CHAT = `any;-;${STRANGER}`;
export const GROUP_CHAT = "any;+;chat123456789";

/** The test chats in `<dir>/Library/Messages/chat.db`: the writer's Sequoia subset, or a release's dump. */
export function chatDbIn(dir: string, release?: ReleaseName) {
  const path = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(path), { recursive: true });
  const writer = release ? chatDbOfRelease(release, dir).writer : openChatDbWriter(path);
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: STRANGER_CHAT, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  writer.chat({
    guid: GROUP_CHAT,
    style: 43,
    chatIdentifier: "chat123456789",
    displayName: "Trip",
    participants: [FRIEND, STRANGER],
  });
  return { path, writer };
}

/**
 * A temp dir with a Messages-like chat.db and the test allowlist, and the environment of a `gw serve`
 * process reading that chat.db on a free port (for tests that spawn the real command); with `standIn`,
 * sending through the Messages stand-in program, which writes its rows into that chat.db.
 */
export function chatDbServeEnv(extra: Record<string, string> = {}, opts: { standIn?: boolean } = {}) {
  const dir = tempDir();
  const chat = chatDbIn(dir);
  const port = freePort();
  const env = isolatedEnv(dir, {
    GW_BEARER_TOKEN: TOKEN,
    GW_BIND_PORT: String(port),
    GW_CHAT_DB_PATH: chat.path,
    ...(opts.standIn ? { GW_OSASCRIPT_PATH: standInProgram(dir), GW_STANDIN_CHAT_DB: chat.path } : {}),
    ...extra,
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  return { dir, chat, port, env };
}

export async function deviceService(
  opts: {
    dir?: string;
    env?: Record<string, string>;
    osascriptTimeoutMs?: number;
    clock?: Clock;
    openStore?: ServicePorts["openStore"];
    /** Start on this release's chat.db (chatdb-releases.ts) instead of the writer's Sequoia subset. */
    release?: ReleaseName;
  } = {},
) {
  const dir = opts.dir ?? tempDir();
  const chat = chatDbIn(dir, opts.release);
  const env: Record<string, string> = {
    ...isolatedEnv(dir),
    GW_BEARER_TOKEN: TOKEN,
    GW_CHAT_DB_PATH: chat.path,
    GW_OSASCRIPT_PATH: standInProgram(dir),
    GW_DEVICE_POLL_INTERVAL_MS: "50",
    GW_STANDIN_CHAT_DB: chat.path,
    GW_STANDIN_LOG: join(dir, "standin.log"),
    GW_STANDIN_FAIL_FILE: join(dir, "standin-fail"),
    ...opts.env,
  };
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const host = { platform: process.platform, homeDir: dir, cwd: dir };
  const loaded = loadConfig(env, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const log = recordingLogger();
  const start = async () => {
    const svc = await startWired({
      config: loaded.config,
      env,
      host,
      clock: opts.clock ?? systemClock,
      log,
      ...(opts.openStore ? { openStore: opts.openStore } : {}),
      ports: opts.osascriptTimeoutMs ? { osascriptTimeoutMs: opts.osascriptTimeoutMs } : {},
    });
    closeAtEnd(svc);
    return svc;
  };
  const svc = await start();
  return { dir, env, chat, log, svc, start, request: makeRequest(svc.app), config: loaded.config };
}
