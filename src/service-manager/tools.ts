/**
 * Runs launchctl and systemctl (runner): the program is looked up on the caller's PATH (so tests and
 * odd setups can put another one first) and run without a shell through the Spawner port, with a
 * deadline. A program missing from PATH is a ServiceError naming it.
 */
import type { Spawner } from "../core/ports.ts";
import { ServiceError } from "./errors.ts";

export const TOOL_TIMEOUT_MS = 15_000;

export interface ToolResult {
  /** null when the run timed out or ended by a signal. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** argv[0] is a program name (launchctl, systemctl), found on PATH. */
export type RunTool = (argv: readonly string[]) => Promise<ToolResult>;

export function createToolRunner(spawner: Spawner, env: Record<string, string | undefined>): RunTool {
  const PATH = env.PATH ?? "/usr/bin:/bin:/usr/sbin:/sbin";
  const childEnv: Record<string, string> = { PATH };
  if (env.HOME) childEnv.HOME = env.HOME;
  return async ([name, ...args]) => {
    if (name === undefined) throw new ServiceError("gw service: empty command");
    const program = Bun.which(name, { PATH });
    if (program === null)
      throw new ServiceError(
        `gw service: ${name} was not found on PATH (${PATH}); put its directory on PATH`,
      );
    const r = await spawner.run([program, ...args], { stdin: "", timeoutMs: TOOL_TIMEOUT_MS, env: childEnv });
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  };
}

/** `launchctl print …` as one line, for messages and reports. */
export function commandLine(argv: readonly string[]): string {
  return argv
    .map((a) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`))
    .join(" ");
}

/** A failed run as a ServiceError: the command line, its exit, what it said, and what to try. */
export function toolFailure(argv: readonly string[], r: ToolResult, hint: string): ServiceError {
  const said = `${r.stderr}\n${r.stdout}`.trim().replace(/\s*\n\s*/g, " ");
  const how = r.exitCode === null ? "timed out or was killed" : `failed (exit ${r.exitCode})`;
  return new ServiceError(`gw service: \`${commandLine(argv)}\` ${how}${said ? `: ${said}` : ""}. ${hint}`);
}
