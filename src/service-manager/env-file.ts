/**
 * The service's env file (pure): `KEY=value` lines that gw copies into the launchd plist and systemd
 * reads as EnvironmentFile=, so both must read a line the same way. The parser is therefore strict and
 * refuses what the two could read differently (quotes around a value, backslashes, spaces around `=` or
 * at a value's ends, `export`, control characters, a repeated key), each with its 1-based line number.
 * Blank lines and lines whose first non-blank character is `#` are comments.
 */
import { isAbsolute } from "node:path";
import { hasControlChar } from "./control-chars.ts";

export type EnvVars = ReadonlyArray<readonly [string, string]>;

export interface EnvFileProblem {
  line: number;
  problem: string;
}

export type EnvFileParse = { ok: true; vars: [string, string][] } | { ok: false; problems: EnvFileProblem[] };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `value` cannot be written to the env file as it is, or null when it can. */
export function envValueProblem(value: string): string | null {
  // Tab is allowed inside a value; every other control character (a CR from Windows line ends, too) is not.
  if (hasControlChar(value, { allowTab: true }))
    return "contains a control character (a Windows line end?): save the file with plain Unix lines";
  if (/^[ \t]|[ \t]$/.test(value))
    return "starts or ends with a space or tab, which systemd would drop: remove it";
  if (value.startsWith('"') || value.startsWith("'"))
    return "starts with a quote: write the value without quotes (it is taken exactly as written)";
  if (value.includes("\\")) return "contains a backslash, which systemd reads as an escape: remove it";
  return null;
}

export function parseEnvFile(text: string): EnvFileParse {
  const vars: [string, string][] = [];
  const problems: EnvFileProblem[] = [];
  const seen = new Map<string, number>();
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  lines.forEach((raw, i) => {
    const read = readLine(raw);
    if (read === null) return;
    if ("problem" in read) {
      problems.push({ line: i + 1, problem: read.problem });
      return;
    }
    const first = seen.get(read.key);
    if (first !== undefined) {
      problems.push({ line: i + 1, problem: `${read.key} is already set on line ${first}: keep one` });
      return;
    }
    seen.set(read.key, i + 1);
    vars.push([read.key, read.value]);
  });
  return problems.length === 0 ? { ok: true, vars } : { ok: false, problems };
}

/** One line: a variable, a problem, or null for a blank line or a comment. */
function readLine(raw: string): { key: string; value: string } | { problem: string } | null {
  if (raw.trim() === "") return null;
  if (raw.trimStart().startsWith("#")) {
    // systemd continues a comment that ends with a backslash onto the next line, hiding it.
    return raw.trimEnd().endsWith("\\")
      ? { problem: "a comment ends with a backslash, which hides the next line" }
      : null;
  }
  if (/^export\s/.test(raw))
    return { problem: "starts with `export`: remove it (this is not a shell script)" };
  const eq = raw.indexOf("=");
  if (eq === -1) return { problem: "is not KEY=value (comments start with #)" };
  const key = raw.slice(0, eq);
  const value = raw.slice(eq + 1);
  if (key !== key.trim()) return { problem: "has a space around the name or before `=`: remove it" };
  if (!NAME.test(key))
    return { problem: `"${key}" is not a variable name (letters, digits and _, not starting with a digit)` };
  const valueProblem = envValueProblem(value);
  return valueProblem === null ? { key, value } : { problem: `the value of ${key} ${valueProblem}` };
}

export const ENV_FILE_HEADER = `# gw login service environment, written once by \`gw service install\` and never overwritten.
# It holds the variables of the \`gw serve\` that the service runs. launchd (macOS): \`gw service install\`
# copies them into the LaunchAgent plist, so run it again after an edit. systemd: this file is the unit's
# EnvironmentFile=, so run \`systemctl --user restart gw\` after an edit.
# GW_BEARER_TOKEN is the token every HTTP client of the gateway (gw mcp, your agents) must send:
# keep this file private (mode 0600).
# Format: one KEY=value per line, no quotes, no spaces around =, no backslashes; # starts a comment.
# Any setting of the README's configuration table may be added, for example:
# GW_BIND_PORT=8080
# GW_COMMUNITY_BOT_TOKEN=...
# GW_WEBHOOK_URL=http://127.0.0.1:8090/webhook
# GW_WEBHOOK_SECRET=...
`;

/** XDG locations of the installing shell that the service must share to find the same files. */
const INHERITED = ["XDG_CONFIG_HOME", "XDG_DATA_HOME"] as const;

/**
 * The variables of a new env file: the fresh token, then the installing shell's XDG_CONFIG_HOME and
 * XDG_DATA_HOME when they are absolute (a login service does not get the shell's variables, and
 * without them it would look for the allowlist and the database elsewhere).
 */
export function initialEnvVars(
  token: string,
  shellEnv: Record<string, string | undefined>,
): [string, string][] {
  const vars: [string, string][] = [["GW_BEARER_TOKEN", token]];
  for (const name of INHERITED) {
    const v = shellEnv[name];
    if (v && isAbsolute(v) && envValueProblem(v) === null) vars.push([name, v]);
  }
  return vars;
}

export function renderEnvFile(vars: EnvVars): string {
  return ENV_FILE_HEADER + vars.map(([k, v]) => `${k}=${v}\n`).join("");
}
