/**
 * What a benchmark's gw child shares with `gw serve`: the configuration parsed from its GW_ variables
 * and the pino logger (the day's log file and stderr), and a way to observe ingest commits without touching src:
 * `traceIngest` wraps the ingest function each connector is started with and calls `after` once the
 * batch's transaction has returned (from then on GET /messages/unread lists its messages).
 */
import { formatProblems, loadConfig, secretValues } from "../../src/config/load.ts";
import type { HostInfo } from "../../src/config/paths.ts";
import type { buildConnectors } from "../../src/connectors/registry.ts";
import type { Ingest, IngestBatch } from "../../src/ingest/ingest.ts";
import { createLogger } from "../../src/log/logger.ts";

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
