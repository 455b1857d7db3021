/**
 * The LaunchAgent that runs `gw serve` at login (pure): label dev.gw.serve, this program's absolute
 * command + `serve`, the env file's variables, stdout/stderr to launchd.out.log / launchd.err.log in
 * the log dir, kept alive, started at load, ProcessType Interactive, working dir the home dir. The file
 * holds the token, so the runner writes it 0600.
 */
import { isAbsolute, join } from "node:path";
import type { EnvVars } from "./env-file.ts";
import { ServiceError } from "./errors.ts";
import { type PlistValue, renderPlist } from "./plist-xml.ts";
import { LAUNCHD_LABEL } from "./target.ts";

export const LAUNCHD_STDOUT_FILE = "launchd.out.log";
export const LAUNCHD_STDERR_FILE = "launchd.err.log";

export interface LaunchdJobSpec {
  /** selfCommand(): the compiled binary, or bun + the absolute src/main.ts. */
  self: readonly string[];
  environment: EnvVars;
  logDir: string;
  homeDir: string;
}

export function launchdLogPaths(logDir: string): { out: string; err: string } {
  return { out: join(logDir, LAUNCHD_STDOUT_FILE), err: join(logDir, LAUNCHD_STDERR_FILE) };
}

export function buildLaunchdPlist(spec: LaunchdJobSpec): string {
  const program = spec.self[0];
  if (program === undefined || !isAbsolute(program))
    throw new ServiceError(`gw service: the program path ${JSON.stringify(program)} is not absolute`);
  const logs = launchdLogPaths(spec.logDir);
  const job: Record<string, PlistValue> = {
    Label: LAUNCHD_LABEL,
    ProgramArguments: [...spec.self, "serve"],
    // launchd never rotates StandardErrorPath: errors only there, everything in gw's rotated files.
    EnvironmentVariables: { GW_LOG_STDERR_LEVEL: "error", ...Object.fromEntries(spec.environment) },
    WorkingDirectory: spec.homeDir,
    StandardOutPath: logs.out,
    StandardErrorPath: logs.err,
    RunAtLoad: true,
    KeepAlive: true,
    ProcessType: "Interactive",
  };
  return renderPlist(job);
}
