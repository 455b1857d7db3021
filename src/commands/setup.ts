/**
 * What every command does first: read the host from the context, parse the configuration (warnings to
 * stderr; problems end the command with exit 2), build the logger from it, and open the state database
 * read-only for the commands that only look at it.
 */
import { type Env, formatProblems, loadConfig, secretValues } from "../config/load.ts";
import type { HostInfo } from "../config/paths.ts";
import type { Config, SettingKey } from "../config/settings.ts";
import { createLogger, type GwLogger } from "../log/logger.ts";
import { StoreVersionError } from "../store/open.ts";
import { openStoreReadOnly, type Store } from "../store/store.ts";
import { type CommandContext, CommandError, EXIT_CONFIG } from "./exit.ts";

export function hostOf(ctx: CommandContext, homeDir = ctx.homeDir): HostInfo {
  return { platform: ctx.platform, homeDir, cwd: ctx.cwd };
}

export function configOf(
  ctx: CommandContext,
  opts: { env?: Env; host?: HostInfo; required?: SettingKey[]; client?: boolean } = {},
): Config {
  const loaded = loadConfig(
    opts.env ?? ctx.env,
    opts.host ?? hostOf(ctx),
    opts.required ?? ["bearerToken"],
    opts.client ?? false,
  );
  for (const w of loaded.warnings) ctx.stderr.write(`warning: ${w}\n`);
  if (!loaded.ok) throw new CommandError(formatProblems(loaded.problems), EXIT_CONFIG);
  return loaded.config;
}

/** The logger of a face: `gw serve` and `gw demo` log to `gw.*.log`, the others to `<face>.*.log`. */
export function loggerOf(config: Config, ctx: CommandContext, face?: "mcp" | "receiver"): Promise<GwLogger> {
  return createLogger({
    dir: config.logDir,
    name: face ?? "gw",
    level: config.logLevel,
    stderrLevel: config.logStderrLevel,
    secrets: secretValues(config),
    stderr: ctx.stderr,
    ...(face ? { bindings: { face } } : {}),
  });
}

/** The state database read-only (null when there is none yet); a schema it cannot read ends the command. */
export function readStore(dbPath: string): Store | null {
  try {
    return openStoreReadOnly(dbPath);
  } catch (err) {
    if (err instanceof StoreVersionError) throw new CommandError(`gw: ${err.message}`);
    throw new CommandError(`gw: cannot read the state database ${dbPath}: ${(err as Error).message}`);
  }
}
