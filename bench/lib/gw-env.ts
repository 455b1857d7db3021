/**
 * The environment of a gw under test: every path inside its own dir (test/helpers/process.ts
 * isolatedEnv), this run's bearer, listening on the loopback at a port of its choosing unless told,
 * and whatever a benchmark adds on top.
 */
import { isolatedEnv } from "../../test/helpers/process.ts";
import { PATH, TOKEN } from "./settings.ts";

export function gwEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH,
    ...isolatedEnv(dir, { GW_BEARER_TOKEN: TOKEN, GW_BIND_HOST: "127.0.0.1", GW_BIND_PORT: "0", ...extra }),
  };
}
