/**
 * Services for the bad-input properties, built as `gw serve` builds them (loadConfig + createService)
 * on temporary paths. Unlike test/helpers/service.ts these never register bun:test hooks, so the same
 * code runs under `bun test` and under `bun run fuzz`; the caller closes what it opens.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatProblems, loadConfig } from "../../../src/config/load.ts";
import type { ConnectorRegistry } from "../../../src/connectors/connector.ts";
import { buildConnectors } from "../../../src/connectors/registry.ts";
import type { Clock, Logger } from "../../../src/core/ports.ts";
import { bunSpawner } from "../../../src/core/spawn.ts";
import { createService } from "../../../src/service.ts";
import { recordingConnector } from "../../fakes/recording-connector.ts";
import { recordingLogger } from "../../helpers/logger.ts";
import { inbound, manualClock } from "../../helpers/messages.ts";
import { isolatedEnv, standInProgram } from "../../helpers/process.ts";

import { tempDir } from "../../helpers/temp.ts";

export const TOKEN = "fuzz-token-0123456789abcdef0123456789";
export const AUTH = { authorization: `Bearer ${TOKEN}` };
export const DM = "+15555550100";
export const STRANGER = "+15555550199";
export const DISCORD_CHANNEL = "community_chat:channel:1300000000000000042";

export const ALLOWLIST = `
[[entry]]
source = "device_messenger"
id = "${DM}"
person_id = "ann"
[[entry]]
source = "community_chat"
id = "1100000000000000001"
person_id = "ann"
`;

/** A service with recording connectors and a manual clock, seeded with one message of each kind. */
export async function apiService(env: Record<string, string> = {}) {
  const dir = tempDir("gw-fuzz-");
  const fullEnv: Record<string, string> = { ...isolatedEnv(dir), GW_BEARER_TOKEN: TOKEN, ...env };
  writeFileSync(fullEnv.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const host = { platform: process.platform, homeDir: dir, cwd: dir };
  const loaded = loadConfig(fullEnv, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const clock = manualClock();
  const log = recordingLogger();
  const device = recordingConnector("device_messenger");
  const discord = recordingConnector("community_chat");
  const connectors: ConnectorRegistry = { device_messenger: device, community_chat: discord };
  const svc = createService({ config: loaded.config, clock, log, host, connectors: () => connectors });
  await svc.start();
  const ingest = (m: Parameters<typeof inbound>[0]) =>
    svc.ingest({ source: m?.source ?? "device_messenger", messages: [inbound(m)], cursor: null })[0]
      ?.id as string;
  const allowed = ingest({});
  const quarantined = ingest({
    channel: { id: STRANGER, type: "dm", platformRef: `any;-;${STRANGER}` },
    sender: { id: STRANGER, displayName: STRANGER },
  });
  const discordMessage = ingest({
    source: "community_chat",
    channel: { id: DISCORD_CHANNEL, type: "group", platformRef: "1300000000000000042" },
    sender: { id: "1100000000000000001", displayName: "ann" },
  });
  const handle = (req: Request) => svc.app.handle(req);
  return {
    svc,
    dir,
    clock,
    log,
    device,
    discord,
    config: loaded.config,
    ids: { allowed, quarantined, discordMessage },
    handle,
    close: () => svc.close(),
  };
}

export type ApiService = Awaited<ReturnType<typeof apiService>>;

/** Runs `fn` on a fresh apiService(env) and closes the service after, whatever `fn` does. */
export async function withApiService<T>(
  env: Record<string, string>,
  fn: (s: ApiService) => Promise<T>,
): Promise<T> {
  const s = await apiService(env);
  try {
    return await fn(s);
  } finally {
    await s.close();
  }
}

/**
 * A service with the real iMessage connector reading `chatDbPath` and sending through the Messages
 * stand-in (its calls logged to `<dir>/standin.log`). `clock` defaults to the system clock.
 */
export async function deviceService(o: {
  dir: string;
  chatDbPath: string;
  env?: Record<string, string>;
  clock?: Clock;
  log?: Logger;
}) {
  const env: Record<string, string> = {
    ...isolatedEnv(o.dir),
    GW_BEARER_TOKEN: TOKEN,
    GW_CHAT_DB_PATH: o.chatDbPath,
    GW_OSASCRIPT_PATH: standInProgram(o.dir),
    GW_DEVICE_POLL_INTERVAL_MS: "50",
    GW_STANDIN_CHAT_DB: o.chatDbPath,
    GW_STANDIN_LOG: join(o.dir, "standin.log"),
    ...o.env,
  };
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const host = { platform: process.platform, homeDir: o.dir, cwd: o.dir };
  const loaded = loadConfig(env, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const log = o.log ?? recordingLogger();
  const clock = o.clock ?? { now: () => Date.now() };
  const svc = createService({
    config: loaded.config,
    clock,
    log,
    host,
    connectors: buildConnectors({ config: loaded.config, env, host, clock, log, spawner: bunSpawner }),
  });
  await svc.start();
  return { svc, log, config: loaded.config };
}

export { manualClock };
