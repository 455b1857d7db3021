/**
 * Databases as an older gw left them, for the migration tests. `databaseAtVersion(path, n)` opens a new
 * file with the first n migrations applied, as that gw's openDatabase did (pragmas and backfills
 * included); the caller inserts its rows and closes it. `openUpgraded(seed)` has `seed` write such a
 * database in a new temp folder, then opens it with this gw's store, which migrates it.
 */
import type { Database } from "bun:sqlite";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { openDatabase } from "../../src/store/open.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDir } from "./temp.ts";

export function databaseAtVersion(path: string, version: number): Database {
  return openDatabase(path, { migrations: MIGRATIONS.slice(0, version), name: `version ${version}` });
}

export function openUpgraded(seed: (path: string) => void): ReturnType<typeof openStore> {
  const path = join(tempDir(), "gw.db");
  seed(path);
  return openStore(path);
}
