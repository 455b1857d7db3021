/**
 * `gw serve`: the composition root of the service. Builds the real clock, logger and connectors, checks what
 * can still fail as configuration (the allowlist: exit 2), listens, then starts the connectors, whose
 * backlogs are read in the background while the API answers. SIGHUP reloads the allowlist. While it runs,
 * `gw.pid` next to the database names its process.
 */
import { AllowlistFileError } from "../allowlist/holder.ts";
import { buildConnectors } from "../connectors/registry.ts";
import { systemClock } from "../core/ports.ts";
import { bunSpawner } from "../core/spawn.ts";
import { createService, type Service } from "../service.ts";
import { StoreVersionError } from "../store/open.ts";
import { VERSION } from "../version.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_FAILURE } from "./exit.ts";
import { superviseProcess } from "./lifecycle.ts";
import { makeReachable } from "./reachable.ts";
import { configOf, hostOf, loggerOf } from "./setup.ts";

/** The ordered stop ends within this, or the process exits without the rest of it. */
export const STOP_DEADLINE_MS = 10_000;

/**
 * On SIGINT/SIGTERM it stops in order (lifecycle.ts): answer held long polls, stop accepting requests
 * (in-flight ones finish), stop connectors and timers, close the database. An unhandled error raised in a
 * platform library restarts its connector; any other ends in the same ordered stop, exit 1.
 */
export async function serve(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx);
  const log = await loggerOf(config, ctx);

  let service: Service;
  try {
    const host = hostOf(ctx);
    const connectors = buildConnectors({
      config,
      env: ctx.env,
      host,
      clock: systemClock,
      log,
      spawner: bunSpawner,
    });
    service = createService({ config, clock: systemClock, log, host, connectors });
  } catch (err) {
    if (err instanceof StoreVersionError) throw new CommandError(`gw serve: ${err.message}`);
    throw new CommandError(
      `gw serve: cannot open the state database ${config.dbPath}: ${(err as Error).message}`,
    );
  }
  try {
    service.prepare();
  } catch (err) {
    await service.close();
    if (err instanceof AllowlistFileError) {
      throw new CommandError(
        `configuration error: GW_ALLOWLIST_PATH ${err.path} is invalid: ${err.problems.join("; ")}. Fix the file and start again.`,
        EXIT_CONFIG,
      );
    }
    throw err;
  }

  // Listen first: /healthz and the API answer while the connectors connect and catch up.
  const { app } = service;
  try {
    app.listen({ hostname: config.bindHost, port: config.bindPort, reusePort: false });
  } catch (err) {
    await service.close();
    throw new CommandError(
      `gw serve: cannot listen on ${config.bindHost}:${config.bindPort} (${(err as Error).message}). ` +
        "Is another gw running? Set GW_BIND_PORT to a free port.",
    );
  }
  const port = app.server?.port ?? config.bindPort;
  const unreachable = makeReachable({
    dbPath: config.dbPath,
    reload: service.allowlist.reload,
    log,
    events: process,
  });
  log.info(
    { version: VERSION, host: config.bindHost, port, db: config.dbPath },
    `gw serve listening on http://${config.bindHost}:${port}`,
  );

  const life = superviseProcess({
    events: process,
    log,
    stopDeadlineMs: STOP_DEADLINE_MS,
    stop: async () => {
      service.endLongPolls();
      await app.stop();
      await service.close();
    },
    recover: (err, origin) => service.restartConnectorOf(origin, err),
    finish: unreachable,
  });
  service.start().catch((err) => {
    log.error({ err: String(err) }, "gw serve could not start its connectors");
    life.stop("start failure", EXIT_FAILURE);
  });
  return await life.done;
}
