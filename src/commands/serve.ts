/**
 * `gw serve`: the composition root of the service. Builds the real clock, logger, store, allowlist,
 * ingest and HTTP app, starts listening, and stops in order on SIGINT/SIGTERM: stop accepting
 * requests, stop connectors, close the database. SIGHUP reloads the allowlist.
 */
import { mkdirSync } from "node:fs";
import { AllowlistFileError, createAllowlistHolder } from "../allowlist/holder.ts";
import { formatProblems, loadConfig, secretValues } from "../config/load.ts";
import type { Config } from "../config/settings.ts";
import { createIdFactory } from "../core/ids.ts";
import { systemClock } from "../core/ports.ts";
import { createApp } from "../http/app.ts";
import { createIngest } from "../ingest/ingest.ts";
import { createLogger } from "../log/logger.ts";
import { StoreVersionError } from "../store/open.ts";
import { openStore } from "../store/store.ts";
import { VERSION } from "../version.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_OK } from "./exit.ts";

export function loadServiceConfig(ctx: CommandContext): Config {
  const loaded = loadConfig(ctx.env, { platform: ctx.platform, homeDir: ctx.homeDir, cwd: ctx.cwd });
  for (const w of loaded.warnings) ctx.stderr.write(`warning: ${w}\n`);
  if (!loaded.ok) throw new CommandError(formatProblems(loaded.problems), EXIT_CONFIG);
  return loaded.config;
}

export async function serve(ctx: CommandContext): Promise<number> {
  const config = loadServiceConfig(ctx);
  const bearerToken = config.bearerToken as string;
  const clock = systemClock;
  const startedAtMs = clock.now();
  const log = createLogger({
    dir: config.logDir,
    level: config.logLevel,
    secrets: secretValues(config),
    stderr: ctx.stderr,
  });

  let store: ReturnType<typeof openStore>;
  try {
    store = openStore(config.dbPath);
  } catch (err) {
    if (err instanceof StoreVersionError) throw new CommandError(`gw serve: ${err.message}`);
    throw new CommandError(
      `gw serve: cannot open the state database ${config.dbPath}: ${(err as Error).message}`,
    );
  }
  mkdirSync(config.attachmentDir, { recursive: true, mode: 0o700 });

  const allowlist = createAllowlistHolder({ path: config.allowlistPath, identities: store.identities, log });
  try {
    allowlist.load();
  } catch (err) {
    store.close();
    if (err instanceof AllowlistFileError) {
      throw new CommandError(
        `configuration error: GW_ALLOWLIST_PATH ${err.path} is invalid: ${err.problems.join("; ")}. Fix the file and start again.`,
        EXIT_CONFIG,
      );
    }
    throw err;
  }

  const ids = createIdFactory(clock);
  // Connectors (device messenger, community chat) receive this ingest when they land.
  createIngest({
    store,
    allowlist: allowlist.current,
    ids,
    clock,
    webhooksEnabled: config.webhookUrl !== null,
    attachmentDir: config.attachmentDir,
    log,
  });

  const app = createApp({
    bearerToken,
    log,
    health: {
      version: VERSION,
      startedAtMs,
      now: clock.now,
      webhookCounts: store.deliveries.counts,
      connectors: () => ({
        device_messenger: {
          state: "disabled",
          detail: "The iMessage connector is not part of this build yet.",
        },
        community_chat: { state: "disabled", detail: "The Discord connector is not part of this build yet." },
      }),
    },
  });

  try {
    app.listen({ hostname: config.bindHost, port: config.bindPort, reusePort: false });
  } catch (err) {
    store.close();
    throw new CommandError(
      `gw serve: cannot listen on ${config.bindHost}:${config.bindPort} (${(err as Error).message}). ` +
        "Is another gw running? Set GW_BIND_PORT to a free port.",
    );
  }
  const port = app.server?.port ?? config.bindPort;
  log.info(
    { version: VERSION, host: config.bindHost, port, db: config.dbPath },
    `gw serve listening on http://${config.bindHost}:${port}`,
  );

  return await new Promise<number>((resolve) => {
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, "stopping");
      await app.stop();
      store.close();
      log.info({}, "stopped");
      resolve(EXIT_OK);
    };
    process.on("SIGINT", () => void stop("SIGINT"));
    process.on("SIGTERM", () => void stop("SIGTERM"));
    process.on("SIGHUP", () => {
      log.info({}, "SIGHUP: reloading the allowlist");
      allowlist.reload();
    });
  });
}
