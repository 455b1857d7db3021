/**
 * The one configuration loader: reads the `GW_` variables once, parses every one of them and
 * reports every problem together (never clamps a bad value away). Variables with another prefix are
 * ignored; unknown `GW_` names come back as warnings with the closest known name. An empty value
 * counts as unset, except that a required variable must be non-empty.
 */

import { SettingError } from "./parsers.ts";
import { defaultDirs, type HostInfo } from "./paths.ts";
import { type Config, SETTINGS, type SettingKey } from "./settings.ts";

export interface ConfigProblem {
  variable: string;
  problem: string;
  fix: string;
}

export type LoadResult =
  | { ok: true; config: Config; warnings: string[] }
  | { ok: false; problems: ConfigProblem[]; warnings: string[] };

export type Env = Record<string, string | undefined>;

export function loadConfig(
  env: Env,
  host: HostInfo,
  required: readonly SettingKey[] = ["bearerToken"],
  /** A client of gw serve (gw mcp, gw receiver): its token is the service's, never a new one. */
  client = false,
): LoadResult {
  const dirs = defaultDirs(env, host);
  const problems: ConfigProblem[] = [];
  const values: Record<string, unknown> = {};

  for (const [key, s] of Object.entries(SETTINGS) as [SettingKey, (typeof SETTINGS)[SettingKey]][]) {
    const raw = env[s.env];
    if (raw === undefined || raw === "") {
      values[key] = s.fallback(dirs, host);
      if (required.includes(key)) {
        problems.push({
          variable: s.env,
          problem: raw === "" ? "is empty" : "is not set",
          fix:
            client && key === "bearerToken"
              ? "set it to the token gw serve runs with (not a new one): the GW_BEARER_TOKEN line of ~/.config/gw/env after gw service install, or the export line gw demo prints"
              : `set it, e.g. export ${s.env}=$(openssl rand -hex 32)`,
        });
      }
      continue;
    }
    try {
      values[key] = s.parse(raw, host);
    } catch (err) {
      if (!(err instanceof SettingError)) throw err;
      const shown = "secret" in s && s.secret ? "(value hidden)" : JSON.stringify(raw);
      problems.push({ variable: s.env, problem: `${shown} ${err.problem}`, fix: err.fix });
    }
  }

  if (
    env.GW_WEBHOOK_URL &&
    !env.GW_WEBHOOK_SECRET &&
    problems.every((p) => p.variable !== "GW_WEBHOOK_URL")
  ) {
    problems.push({
      variable: "GW_WEBHOOK_SECRET",
      problem: "is not set while GW_WEBHOOK_URL is (webhooks are always signed)",
      fix: "set the same secret here and on the receiver, e.g. export GW_WEBHOOK_SECRET=$(openssl rand -hex 32)",
    });
  }

  values.deviceMessengerOn = host.platform === "darwin" || (env.GW_CHAT_DB_PATH ?? "") !== "";
  values.contactsOn = values.contacts ?? (host.platform === "darwin" || (env.GW_CONTACTS_DIR ?? "") !== "");
  const warnings = unknownVariables(env);
  if (problems.length > 0) return { ok: false, problems, warnings };
  return { ok: true, config: values as Config, warnings };
}

/** One or two lines per problem: the variable, what is wrong, how to fix it. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  return problems
    .map(
      (p) =>
        `configuration error: ${p.variable}${p.problem.startsWith("is ") ? " " : "="}${p.problem}. Fix: ${p.fix}.`,
    )
    .join("\n");
}

/** Names of secret values in a config, so logs can scrub them. */
export function secretValues(config: Config): string[] {
  return Object.entries(SETTINGS)
    .filter(([, s]) => "secret" in s && s.secret)
    .map(([key]) => config[key as SettingKey])
    .filter((v): v is string => typeof v === "string" && v.length > 0);
}

/**
 * Names gw sets for programs it starts, not settings: an agent run by `gw receiver` that runs gw itself
 * inherits them, and they are no typo to warn about.
 */
const GIVEN_TO_AGENTS = ["GW_PROMPT_FILE", "GW_MCP_CONFIG"];
const KNOWN = new Set<string>([...Object.values(SETTINGS).map((s) => s.env), ...GIVEN_TO_AGENTS]);

function unknownVariables(env: Env): string[] {
  return Object.keys(env)
    .filter((name) => name.startsWith("GW_") && !KNOWN.has(name))
    .map((name) => {
      const near = [...KNOWN].find((k) => editDistance(k, name) <= 2);
      return `${name} is not a gw setting and is ignored${near ? ` (did you mean ${near}?)` : ""}`;
    });
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = cur;
  }
  return prev[b.length] ?? 0;
}
