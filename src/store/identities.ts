/**
 * Identity links: (person id, source) pairs derived from the allowlist, replaced as a whole on every
 * successful allowlist load, in one transaction.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";

export type IdentityLink = { person_id: string; source: Source };

export function createIdentityStore(db: Database) {
  const clear = db.prepare("DELETE FROM identity_links");
  const insert = db.prepare<unknown, [string, string]>(
    "INSERT OR IGNORE INTO identity_links (person_id, source) VALUES (?1, ?2)",
  );
  const all = db.prepare<IdentityLink, []>(
    "SELECT person_id, source FROM identity_links ORDER BY person_id, source",
  );
  return {
    replaceAll: (links: readonly IdentityLink[]): void =>
      db
        .transaction(() => {
          clear.run();
          for (const l of links) insert.run(l.person_id, l.source);
        })
        .immediate(),
    list: (): IdentityLink[] => all.all(),
  };
}

export type IdentityStore = ReturnType<typeof createIdentityStore>;
