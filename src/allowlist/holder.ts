/**
 * Holds the live allowlist (runner). `load()` at start-up: a missing file is an empty allowlist with a
 * warning, an invalid file throws AllowlistFileError (a configuration error). `reload()` on SIGHUP: a
 * valid file replaces the list and rebuilds the identity links; an invalid one is logged and the
 * previous list stays. Messages already stored are never reclassified.
 */
import { readFileSync } from "node:fs";
import type { Logger } from "../core/ports.ts";
import type { IdentityStore } from "../store/identities.ts";
import { type Allowlist, buildAllowlist, identityLinks, parseAllowlist } from "./parse.ts";

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
}): AllowlistHolder {
  const { path, identities, log } = deps;
  let live = buildAllowlist([]);

  const read = (): Allowlist => {
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        log.warn({ path }, "allowlist file not found: every sender is quarantined until it exists");
        return buildAllowlist([]);
      }
      throw new AllowlistFileError(path, [`cannot be read (${(err as Error).message})`]);
    }
    const parsed = parseAllowlist(text);
    if (!parsed.ok) throw new AllowlistFileError(path, parsed.problems);
    if (parsed.allowlist.entries.length === 0)
      log.warn({ path }, "allowlist is empty: every sender is quarantined");
    return parsed.allowlist;
  };

  const apply = (next: Allowlist): void => {
    identities.replaceAll(identityLinks(next));
    live = next;
    for (const person of next.singleUsePersons) {
      log.warn({ person_id: person }, "allowlist person_id is used by only one entry (no cross-source link)");
    }
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
