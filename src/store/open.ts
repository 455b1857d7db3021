/**
 * Opens the state database (and, with its own migrations, the receiver's journal): creates its directory 0700
 * and the file 0600 before SQLite touches it (so -wal/-shm inherit 0600), sets the pragmas every connection
 * needs, and applies migrations. A file of a newer schema than this gw knows is refused.
 */
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import type { Migration, MigrationProgress } from "./migration-types.ts";
import { MIGRATIONS } from "./migrations.ts";

export const BUSY_TIMEOUT_MS = 5000;

export class StoreVersionError extends Error {}

export interface Schema {
  migrations: readonly Migration[];
  /** What the file is, for the version error ("the state database"). */
  name: string;
}

const STATE_SCHEMA: Schema = { migrations: MIGRATIONS, name: "the state database" };

/**
 * WAL + synchronous=FULL (+ fullfsync on macOS), so an acknowledged message survives a power cut too, not
 * only a process crash; at human message rates the cost is noise.
 */
export function openDatabase(
  path: string,
  schema: Schema = STATE_SCHEMA,
  opts: { onProgress?: MigrationProgress } = {},
): Database {
  if (path !== ":memory:") prepareFile(path);
  const db = new Database(path, { create: true, strict: true });
  db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  db.run("PRAGMA fullfsync = ON");
  db.run("PRAGMA foreign_keys = ON");
  db.run("PRAGMA journal_size_limit = 67108864");
  migrate(db, schema, opts.onProgress);
  return db;
}

/** The file's schema version; a version newer than this gw knows is refused. */
function versionOf(db: Database, schema: Schema): number {
  const current = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (current > schema.migrations.length) {
    throw new StoreVersionError(
      `${schema.name} has schema version ${current}, newer than this gw knows (${schema.migrations.length}); upgrade gw`,
    );
  }
  return current;
}

/** Applies the migrations the file lacks; a long one reports its progress to `onProgress`. */
export function migrate(db: Database, schema: Schema = STATE_SCHEMA, onProgress?: MigrationProgress): void {
  const { migrations } = schema;
  const current = versionOf(db, schema);
  for (let v = current; v < migrations.length; v++) {
    const m = migrations[v] as Migration;
    const rebuild = typeof m !== "string" && "rebuildsTables" in m;
    // SQLite's table rebuild: foreign keys off around the transaction (the pragma is a no-op inside one),
    // and every reference checked before it commits.
    if (rebuild) db.run("PRAGMA foreign_keys = OFF");
    try {
      db.transaction(() => {
        db.exec(typeof m === "string" ? m : m.sql);
        if (typeof m !== "string" && "backfill" in m) m.backfill(db, onProgress ?? (() => {}));
        if (rebuild && db.query("PRAGMA foreign_key_check").all().length > 0)
          throw new Error(`migration ${v + 1} of ${schema.name} left broken references`);
        db.run(`PRAGMA user_version = ${v + 1}`);
      }).immediate();
    } finally {
      if (rebuild) db.run("PRAGMA foreign_keys = ON");
    }
  }
}

/**
 * Opens an existing state database read-only, for commands that only look (gw quarantine, gw webhooks
 * list, gw doctor): null when the file does not exist (nothing is created), the store's busy timeout,
 * and never a migration: a schema this gw does not match (newer, or older and not yet upgraded by
 * gw serve) is refused with StoreVersionError.
 */
export function openDatabaseReadOnly(path: string, schema: Schema = STATE_SCHEMA): Database | null {
  if (!existsSync(path)) return null;
  const db = new Database(path, { readonly: true, strict: true });
  try {
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (versionOf(db, schema) < schema.migrations.length)
      throw new StoreVersionError(
        `${schema.name} is from an older gw; start gw serve once so it upgrades it, then try again`,
      );
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

function prepareFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
  for (const suffix of ["-wal", "-shm"]) if (existsSync(path + suffix)) chmodSync(path + suffix, 0o600);
}
