/**
 * Holds the live allowlist (runner). `load()` at start-up: a missing file is an empty allowlist with a
 * warning, an invalid file throws AllowlistFileError (a configuration error). `reload()` on SIGHUP: a
 * valid file replaces the list and rebuilds the identity links; an invalid one is logged and the
 * previous list stays. Messages already stored are never reclassified.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "../core/ports.ts";
import type { IdentityStore } from "../store/identities.ts";
import {
  type Allowlist,
  type AllowlistOptions,
  buildAllowlist,
  identityLinks,
  parseAllowlist,
} from "./parse.ts";
import { FORGEABLE_SERVICES } from "./services.ts";

export class AllowlistFileError extends Error {
  constructor(
    readonly path: string,
    readonly problems: readonly string[],
  ) {
    super(`allowlist ${path} is invalid: ${problems.join("; ")}`);
  }
}

export interface AllowlistHolder {
  current(): Allowlist;
  load(): void;
  /** Returns true when the new file was applied. */
  reload(): boolean;
}

export function createAllowlistHolder(deps: {
  path: string;
  identities: IdentityStore;
  log: Logger;
  /** GW_DEVICE_TRUSTED_SERVICES and the like: how every version of the file is read. */
  options?: AllowlistOptions;
}): AllowlistHolder {
  const { path, identities, log, options = {} } = deps;
  let live = buildAllowlist([], options);

  const read = (): Allowlist => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        log.warn({ path }, "allowlist file not found: every sender is quarantined until it exists");
        return buildAllowlist([], options);
      }
      throw new AllowlistFileError(path, [`cannot be read (${(err as Error).message})`]);
    }
    const parsed = parseAllowlist(text, options);
    if (!parsed.ok) throw new AllowlistFileError(path, parsed.problems);
    if (parsed.allowlist.entries.length === 0)
      log.warn({ path }, "allowlist is empty: every sender is quarantined");
    return parsed.allowlist;
  };

  const apply = (next: Allowlist): void => {
    identities.replaceAll(identityLinks(next));
    live = next;
    for (const e of next.entries)
      if (e.source === "device_messenger" && next.servicesOf(e).some((s) => FORGEABLE_SERVICES.includes(s)))
        log.warn(
          { id: e.id, person_id: e.person_id, services: next.servicesOf(e) },
          "allowlist entry trusts SMS or RCS, whose sender ids can be forged: anyone who knows this number can write as this person",
        );
    // One handle per person is the usual case, not a problem: noted at debug level only.
    for (const person of next.singleUsePersons)
      log.debug(
        { person_id: person },
        "allowlist person_id is used by only one entry (no cross-source link)",
      );
    log.info({ path, entries: next.entries.length }, "allowlist loaded");
  };

  return {
    current: () => live,
    load: () => apply(read()),
    reload: () => {
      try {
        apply(read());
        return true;
      } catch (err) {
        const problems = err instanceof AllowlistFileError ? err.problems : [String(err)];
        log.error({ path, problems }, "allowlist reload failed: keeping the previous list");
        return false;
      }
    },
  };
}
