/**
 * What a benchmark's gw child shares with `gw serve`: the configuration parsed from its GW_ variables
 * and the pino logger (the day's log file and stderr); the service built, listening and started in
 * `gw serve`'s order with its connectors' states at hand (`serveLikeGw`, `bothConnectorsOk`); and a way to
 * observe ingest commits without touching src: `traceIngest` wraps the ingest function each connector is
 * started with and calls `after` once the batch's transaction has returned (from then on GET
 * /messages/unread lists its messages).
 */
import { formatProblems, loadConfig, secretValues } from "../../src/config/load.ts";
import type { HostInfo } from "../../src/config/paths.ts";
import { buildConnectors } from "../../src/connectors/registry.ts";
import { systemClock } from "../../src/core/ports.ts";
import { bunSpawner } from "../../src/core/spawn.ts";
import type { Ingest, IngestBatch } from "../../src/ingest/ingest.ts";
import { createLogger } from "../../src/log/logger.ts";
import { createService } from "../../src/service.ts";

export async function serveSetup(env: Record<string, string | undefined>, homeDir = env.HOME ?? "/tmp") {
  const host: HostInfo = { platform: process.platform, homeDir, cwd: homeDir };
  const loaded = loadConfig(env, host);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const config = loaded.config;
  const log = await createLogger({
    dir: config.logDir,
    level: config.logLevel,
    secrets: secretValues(config),
    stderr: process.stderr,
  });
  return { env, host, config, log };
}

type Build = ReturnType<typeof buildConnectors>;

export function traceIngest(build: Build, after: (batch: IngestBatch) => void): Build {
  return (shared) => {
    const registry = build(shared);
    for (const c of Object.values(registry)) {
      const start = c.start.bind(c);
      c.start = (ingest: Ingest) =>
        start((batch) => {
          const out = ingest(batch);
          after(batch);
          return out;
        });
    }
    return registry;
  };
}

type Setup = Awaited<ReturnType<typeof serveSetup>>;

/**
 * createService with every configured connector (real clock and spawner), keeping the registry the
 * service builds; then prepare(), listen, start(), as `gw serve` does. Does not wait for the connectors.
 */
export async function serveLikeGw(
  { env, host, config, log }: Setup,
  listen: { hostname: string; port: number },
) {
  const build = buildConnectors({ config, env, host, clock: systemClock, log, spawner: bunSpawner });
  let registry: ReturnType<typeof build> = {};
  const svc = createService({
    config,
    clock: systemClock,
    log,
    host,
    connectors: (shared) => {
      registry = build(shared);
      return registry;
    },
  });
  svc.prepare();
  svc.app.listen({ ...listen, reusePort: false });
  await svc.start();
  /** Each connector's state, as /healthz reports it. */
  const states = () => ({
    device_messenger: registry.device_messenger?.health().state ?? "disabled",
    community_chat: registry.community_chat?.health().state ?? "disabled",
  });
  return { svc, states };
}

/** Waits (every 10 ms, at most `timeoutMs`) until both connectors report `ok`. */
export async function bothConnectorsOk(
  states: () => Record<"device_messenger" | "community_chat", string>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (states().device_messenger !== "ok" || states().community_chat !== "ok") {
    if (performance.now() > deadline)
      throw new Error(`connectors not ok after ${timeoutMs / 1000} s: ${JSON.stringify(states())}`);
    await Bun.sleep(10);
  }
}
