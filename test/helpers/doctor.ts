/**
 * Running `gw doctor` (from source) in the e2e tests: `doctor(env, args)` gives its exit code and stdout,
 * `doctorJson(env)` its `--json` report with the checks of one id, and `doctorSetup(extra, allowlist)` a
 * fresh isolated environment on a free port with the tests' allowlist (no file when `allowlist` is null).
 */
import { writeFileSync } from "node:fs";
import type { Check } from "../../src/doctor/check.ts";
import { freePort, isolatedEnv, spawnGw } from "./process.ts";
import { ALLOWLIST } from "./service.ts";
import { tempDir } from "./temp.ts";

export async function doctor(env: Record<string, string>, args: string[] = []) {
  const gw = spawnGw(["doctor", ...args], env);
  const code = await gw.exited;
  return { code, out: gw.output().stdout };
}

export async function doctorJson(env: Record<string, string>) {
  const r = await doctor(env, ["--json"]);
  const report = JSON.parse(r.out) as { ok: boolean; checks: Check[] };
  return { code: r.code, report, byId: (id: string) => report.checks.filter((c) => c.id === id) };
}

export function doctorSetup(extra: Record<string, string> = {}, allowlist: string | null = ALLOWLIST) {
  const dir = tempDir();
  const env = isolatedEnv(dir, { GW_BIND_PORT: String(freePort()), ...extra });
  if (allowlist !== null) writeFileSync(env.GW_ALLOWLIST_PATH as string, allowlist);
  return { dir, env };
}
