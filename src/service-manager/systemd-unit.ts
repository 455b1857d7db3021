/**
 * The systemd user unit that runs `gw serve` (pure). ExecStart= is this program's absolute command + `serve`,
 * each argument escaped per systemd.service(5) so that systemd passes it exactly; EnvironmentFile= takes its
 * path verbatim. Control characters, and what the unit-file reader would strip or join (edge spaces, a final
 * backslash), are refused.
 */
import { isAbsolute } from "node:path";
import { hasControlChar } from "./control-chars.ts";
import { ServiceError } from "./errors.ts";

export const SYSTEMD_DESCRIPTION = "gw gateway (gw serve)";
export const SYSTEMD_RESTART_SEC = 5;

export interface SystemdUnitSpec {
  self: readonly string[];
  envFilePath: string;
}

const SAFE_WORD = /^[A-Za-z0-9_@+=:,./-]+$/;

function refuseControl(value: string, where: string): void {
  if (hasControlChar(value, { allowTab: false }))
    throw new ServiceError(
      `gw service: ${where} cannot be written into a systemd unit: it contains a line break or another control character`,
    );
}

/**
 * One ExecStart= argument, escaped so that systemd passes exactly `word`: `%` doubled (specifiers), `$`
 * doubled (variable substitution), and a word with anything beyond [A-Za-z0-9_@+=:,./-] double-quoted with
 * `\` and `"` backslash-escaped.
 */
export function quoteExecWord(word: string): string {
  refuseControl(word, `the command word ${JSON.stringify(word)}`);
  const expanded = word.replaceAll("%", "%%").replaceAll("$", () => "$$");
  if (SAFE_WORD.test(word)) return expanded;
  return `"${expanded.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

/**
 * The ExecStart= program: systemd refuses an executable path with a quote or a backslash ("Executable
 * name contains special characters") and does not substitute `$` in it, so those are refused here with
 * the fix; `%` is doubled and a path with spaces is quoted.
 */
export function quoteExecProgram(program: string): string {
  refuseControl(program, `the program path ${JSON.stringify(program)}`);
  if (!isAbsolute(program))
    throw new ServiceError(`gw service: the program path ${JSON.stringify(program)} is not absolute`);
  if (/["'\\$]/.test(program))
    throw new ServiceError(
      `gw service: systemd cannot start a program whose path contains a quote, a backslash or $ (${program}); move gw to a plain path and install again`,
    );
  const expanded = program.replaceAll("%", "%%");
  return SAFE_WORD.test(program) ? expanded : `"${expanded}"`;
}

/** A path setting such as EnvironmentFile=: taken verbatim by systemd apart from `%` specifiers. */
export function escapeUnitPath(path: string, where: string): string {
  refuseControl(path, where);
  if (!isAbsolute(path)) throw new ServiceError(`gw service: ${where} ${path} is not absolute`);
  if (/\s$/.test(path) || path.endsWith("\\"))
    throw new ServiceError(
      `gw service: ${where} ${path} ends with a space or a backslash, which systemd drops`,
    );
  return path.replaceAll("%", "%%");
}

export function buildSystemdUnit(spec: SystemdUnitSpec): string {
  const [program = "", ...args] = spec.self;
  const execStart = [quoteExecProgram(program), ...[...args, "serve"].map(quoteExecWord)].join(" ");
  return [
    "# Written by `gw service install` (running it again rewrites this file). The token is in the",
    "# EnvironmentFile below, which gw never overwrites.",
    "[Unit]",
    `Description=${SYSTEMD_DESCRIPTION}`,
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${execStart}`,
    `EnvironmentFile=${escapeUnitPath(spec.envFilePath, "the env file")}`,
    "WorkingDirectory=%h",
    "Restart=always",
    `RestartSec=${SYSTEMD_RESTART_SEC}`,
    "# Exit 2 is a configuration error: restarting cannot fix it.",
    "RestartPreventExitStatus=2",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  ].join("\n");
}
