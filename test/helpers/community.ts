/**
 * A service wired exactly as `gw serve` wires it (createService + buildConnectors with the real
 * Discord connector and the real discord.js), logged in to a fake Discord that speaks the gateway and
 * REST protocols (src/demo/fake-discord). Timers are shortened through the connector's tuning only.
 * Call it inside a test: the service closes when that test ends (before the file's afterEach stops the
 * fake), so no discord.js client outlives its test.
 */
import { afterAll } from "bun:test";
import { writeFileSync } from "node:fs";
import { formatProblems, loadConfig } from "../../src/config/load.ts";
import type { HostInfo } from "../../src/config/paths.ts";
import type { CommunityTuning } from "../../src/connectors/community-chat/connector.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { systemClock } from "../../src/core/ports.ts";
import { FAKE_BOT_TOKEN, type FakeDiscord } from "../../src/demo/fake-discord/server.ts";
import type { Service, ServicePorts } from "../../src/service.ts";
import { recordingLogger } from "./logger.ts";
import { isolatedEnv, waitFor } from "./process.ts";
import { AGENT, makeRequest, startWired, TOKEN } from "./service.ts";

export { allowAnn } from "./service.ts";

import { tempDir } from "./temp.ts";

export const TEST_TUNING: Partial<CommunityTuning> = {
  restTimeoutMs: 1_000,
  restRetries: 1,
  throttleIdentify: false,
  loginRetryMs: [200],
  stopDrainMs: 2_000,
};

export async function communityService(
  fake: FakeDiscord,
  opts: {
    env?: Record<string, string>;
    tuning?: Partial<CommunityTuning>;
    allowlist?: string;
    dir?: string;
    wait?: boolean;
    openStore?: ServicePorts["openStore"];
  } = {},
) {
  const dir = opts.dir ?? tempDir();
  const env: Record<string, string> = {
    ...isolatedEnv(dir),
    GW_BEARER_TOKEN: TOKEN,
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
    ...opts.env,
  };
  writeFileSync(env.GW_ALLOWLIST_PATH as string, opts.allowlist ?? "");
  // Linux without GW_CHAT_DB_PATH: the iMessage connector stays off, Discord is the only one.
  const host: HostInfo = { platform: "linux", homeDir: dir, cwd: dir };
  const loaded = loadConfig(env, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const log = recordingLogger();
  const start = async (): Promise<Service> => {
    const svc = await startWired({
      config: loaded.config,
      env,
      host,
      clock: systemClock,
      log,
      ...(opts.openStore ? { openStore: opts.openStore } : {}),
      ports: { communityTuning: { ...TEST_TUNING, ...opts.tuning } },
    });
    // Registered inside the running test, this hook runs when that test ends.
    afterAll(() => svc.close());
    return svc;
  };
  let svc = await start();
  const request = (...args: Parameters<ReturnType<typeof makeRequest>>) => makeRequest(svc.app)(...args);
  const health = async () =>
    (
      (await (await request("GET", "/healthz")).json()) as {
        connectors: Record<string, { state: string; detail: string }>;
      }
    ).connectors.community_chat as { state: string; detail: string };
  const untilState = (state: string, timeoutMs = 10_000) =>
    waitFor(
      async () => ((await health()).state === state ? true : undefined),
      `community_chat ${state}`,
      timeoutMs,
    );
  if (opts.wait !== false) await untilState("ok");
  return {
    dir,
    env,
    log,
    get svc() {
      return svc;
    },
    request,
    health,
    untilState,
    /** Stops the service (connector first), runs `between`, starts a new one on the same files. */
    restart: async (between?: () => void | Promise<void>, until = "ok") => {
      await svc.close();
      await between?.();
      svc = await start();
      await untilState(until);
    },
  };
}

type Requester = { request: ReturnType<typeof makeRequest> };

/** The texts of agent-a's unread messages (GET /messages/unread?limit=100), in their order. */
export async function unreadTexts(gw: Requester): Promise<string[]> {
  const res = await gw.request("GET", "/messages/unread?limit=100", { headers: AGENT });
  return ((await res.json()) as { messages: Envelope[] }).messages.map((m) => m.text);
}

/** Waits (deadline-bounded) until agent-a has at least `n` unread messages; returns their texts. */
export const waitUnreadTexts = (gw: Requester, n: number): Promise<string[]> =>
  waitFor(async () => {
    const t = await unreadTexts(gw);
    return t.length >= n ? t : undefined;
  }, `${n} unread messages`);
