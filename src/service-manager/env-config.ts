/**
 * The env file's variables read as gw's configuration, i.e. what the service's `gw serve` will see
 * (pure). A problem is a configuration error that names the file, the variable and the fix; unknown
 * GW_ names come back as warnings.
 */
import { loadConfig } from "../config/load.ts";
import type { HostInfo } from "../config/paths.ts";
import type { Config, SettingKey } from "../config/settings.ts";
import type { EnvVars } from "./env-file.ts";
import { ServiceError } from "./errors.ts";

export function envFileConfig(
  vars: EnvVars,
  host: HostInfo,
  envFilePath: string,
  required: readonly SettingKey[],
): { config: Config; warnings: string[] } {
  const loaded = loadConfig(Object.fromEntries(vars), host, required);
  const warnings = loaded.warnings.map((w) => `${envFilePath}: ${w}`);
  if (loaded.ok) return { config: loaded.config, warnings };
  const lines = loaded.problems.map((p) => {
    const missing = p.problem === "is not set" || p.problem === "is empty";
    const fix = missing
      ? `add a line ${p.variable}=<value> to the file${p.variable === "GW_BEARER_TOKEN" ? " (e.g. the output of `openssl rand -hex 32`), or move the file away and run `gw service install` to have a new one written" : ""}`
      : `edit its line in the file: ${p.fix}`;
    return `configuration error: ${envFilePath}: ${p.variable} ${p.problem}. Fix: ${fix}.`;
  });
  throw new ServiceError(lines.join("\n"), true);
}
