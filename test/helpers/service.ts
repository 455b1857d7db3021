/**
 * A service built exactly as `gw serve` builds it (createService), on temporary paths, with a manual
 * clock and recording connectors, driven through `app.handle` (no port). Seed data goes through the
 * real ingest pipeline.
 */
import { afterAll } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatProblems, loadConfig } from "../../src/config/load.ts";
import type { ConnectorRegistry } from "../../src/connectors/connector.ts";
import { buildConnectors, type RegistryPorts } from "../../src/connectors/registry.ts";
import type { Clock } from "../../src/core/ports.ts";
import { bunSpawner } from "../../src/core/spawn.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { createService, type ServicePorts } from "../../src/service.ts";
import { recordingConnector } from "../fakes/recording-connector.ts";
import { allowAnn } from "./allowlist.ts";
import { recordingLogger } from "./logger.ts";
import { inbound, manualClock } from "./messages.ts";
import { freePort, isolatedEnv } from "./process.ts";
import { tempDir } from "./temp.ts";

export const TOKEN = "test-token-0123456789abcdef";
export const AUTH = { authorization: `Bearer ${TOKEN}` };
export const AGENT = { ...AUTH, "x-agent-id": "agent-a" };

export { allowAnn };

export const ALLOWLIST = allowAnn("1001");

const open: { close(): Promise<void> }[] = [];

/** Closes the service when the test file ends. */
export function closeAtEnd(svc: { close(): Promise<void> }): void {
  open.push(svc);
}
afterAll(async () => {
  for (const s of open.splice(0)) await s.close();
});

export async function testService(
  opts: { env?: Record<string, string>; connectors?: ConnectorRegistry; clock?: Clock } = {},
) {
  const dir = tempDir();
  const env: Record<string, string> = { ...isolatedEnv(dir), GW_BEARER_TOKEN: TOKEN, ...opts.env };
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const host = { platform: process.platform, homeDir: dir, cwd: dir };
  const loaded = loadConfig(env, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  // Tests that pass a real clock do not call advance().
  const clock = (opts.clock ?? manualClock()) as ReturnType<typeof manualClock>;
  const log = recordingLogger();
  const connectors = opts.connectors ?? {
    device_messenger: recordingConnector("device_messenger"),
    community_chat: recordingConnector("community_chat"),
  };
  const svc = createService({ config: loaded.config, clock, log, host, connectors: () => connectors });
  await svc.start();
  open.push(svc);

  const request = makeRequest(svc.app);
  const seed = (messages: NormalizedMessage[]) =>
    svc
      .ingest({ source: messages[0]?.source ?? "device_messenger", messages, cursor: null })
      .map((o) => o.id);
  return {
    svc,
    dir,
    env,
    clock,
    log,
    connectors,
    request,
    seed,
    config: loaded.config,
    attachmentsDir: join(dir, "data/attachments"),
  };
}

/**
 * createService with the real connectors buildConnectors makes (the real spawner; `ports` adds the
 * tests' shorter timers), started; the caller decides when it closes.
 */
export async function startWired(o: {
  config: ServicePorts["config"];
  env: Record<string, string>;
  host: ServicePorts["host"];
  clock: Clock;
  log: ServicePorts["log"];
  openStore?: ServicePorts["openStore"];
  ports?: Pick<RegistryPorts, "osascriptTimeoutMs" | "communityTuning">;
}) {
  const svc = createService({
    config: o.config,
    clock: o.clock,
    log: o.log,
    host: o.host,
    ...(o.openStore ? { openStore: o.openStore } : {}),
    connectors: buildConnectors({
      config: o.config,
      env: o.env,
      host: o.host,
      clock: o.clock,
      log: o.log,
      spawner: bunSpawner,
      ...o.ports,
    }),
  });
  await svc.start();
  return svc;
}

/** `app.handle` with JSON bodies: what a client does, without a port. */
export function makeRequest(app: { handle(r: Request): Promise<Response> }) {
  return (
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: unknown; raw?: string } = {},
  ) =>
    app.handle(
      new Request(`http://localhost${path}`, {
        method,
        headers: {
          ...(init.body !== undefined || init.raw !== undefined
            ? { "content-type": "application/json" }
            : {}),
          ...init.headers,
        },
        body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
      }),
    );
}

export { inbound };

/**
 * `app` over real HTTP on a free port, for clients that need a URL (gw mcp, the channel relay): long polls
 * may idle 120 s; `watch` sees each exchange and may answer in its place. `stop()` closes it at once.
 */
export function serveOverHttp(
  app: { handle(r: Request): Promise<Response> },
  watch: (req: Request, res: Response) => Response | undefined | Promise<Response | undefined> = () =>
    undefined,
) {
  const port = freePort();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 120,
    async fetch(req) {
      const res = await app.handle(req);
      return (await watch(req, res)) ?? res;
    },
  });
  return { port, url: `http://127.0.0.1:${port}`, stop: () => server.stop(true) };
}
