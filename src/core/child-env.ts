/**
 * The one policy for what a child program (osascript, the receiver's agent) gets from gw's environment:
 * an allowlist, pure. CHILD_ENV_NAMES when set, plus the names a caller lists (a name, or a prefix
 * ending in `*`); nothing else, so no secret (GW_BEARER_TOKEN, GW_WEBHOOK_SECRET, the bot token) and no
 * variable a program might trip over reaches a child by accident.
 */

/** What every child program may need to run at all. */
export const CHILD_ENV_NAMES = ["PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR"];

export function childEnv(
  source: Record<string, string | undefined>,
  extra: readonly string[] = [],
): Record<string, string> {
  const names = new Set([...CHILD_ENV_NAMES, ...extra.filter((n) => !n.endsWith("*"))]);
  const prefixes = extra.filter((n) => n.endsWith("*")).map((n) => n.slice(0, -1));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    if (names.has(name) || prefixes.some((p) => p !== "" && name.startsWith(p))) env[name] = value;
  }
  return env;
}
