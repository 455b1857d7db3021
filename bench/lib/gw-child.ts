/**
 * What a benchmark's gw child shares with `gw serve`: the configuration parsed from its GW_ variables
 * and the pino logger (the day's log file and stderr); the service built, listening and started in
 * `gw serve`'s order with its connectors' states at hand (`serveLikeGw`, `bothConnectorsOk`), each step
 * marked if asked; and a way to observe ingest commits without touching src: `trace` wraps the ingest
 * function each connector is started with, `before` the call and `after` once the batch's transaction
 * has returned (from then on GET /messages/unread lists its messages).
 */
import { formatProblems, loadConfig, secretValues } from "../../src/config/load.ts";
import type { HostInfo } from "../../src/config/paths.ts";
import { buildConnectors } from "../../src/connectors/registry.ts";
import { systemClock } from "../../src/core/ports.ts";
import { bunSpawner } from "../../src/core/spawn.ts";
import type { Ingest, IngestBatch, IngestOutcome } from "../../src/ingest/ingest.ts";
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

/** Hooks around every connector's ingest calls. */
export interface IngestTrace {
  before?: (batch: IngestBatch) => void;
  after: (batch: IngestBatch, outcomes: IngestOutcome[]) => void;
}

function traceIngest(build: Build, trace: IngestTrace): Build {
  return (shared) => {
    const registry = build(shared);
    for (const c of Object.values(registry)) {
      const start = c.start.bind(c);
      c.start = (ingest: Ingest) =>
        start((batch) => {
          trace.before?.(batch);
          const out = ingest(batch);
          trace.after(batch, out);
          return out;
        });
    }
    return registry;
  };
}

type Setup = Awaited<ReturnType<typeof serveSetup>>;

export interface ServeOptions {
  /** buildConnectors' file watching (default on, as `gw serve`). */
  watchFiles?: boolean;
  trace?: IngestTrace;
  /** Called as each step of the start is taken. */
  mark?: (step: "created" | "listening" | "started") => void;
}

/**
 * createService with every configured connector (real clock and spawner), keeping the registry the
 * service builds; then prepare(), listen, start(), as `gw serve` does. Does not wait for the connectors.
 */
export async function serveLikeGw(
  { env, host, config, log }: Setup,
  listen: { hostname: string; port: number },
  o: ServeOptions = {},
) {
  const ports = { config, env, host, clock: systemClock, log, spawner: bunSpawner, watchFiles: o.watchFiles };
  const build = o.trace ? traceIngest(buildConnectors(ports), o.trace) : buildConnectors(ports);
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
  o.mark?.("created");
  svc.prepare();
  svc.app.listen({ ...listen, reusePort: false });
  o.mark?.("listening");
  await svc.start();
  o.mark?.("started");
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
