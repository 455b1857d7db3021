/**
 * What a migration is, for migrations.ts (the list), migration-search.ts (one with a backfill), open.ts
 * (which runs them) and whoever reports progress. Types only: every module of the store reads them here,
 * so the list and its long steps never import each other.
 */
import type { Database } from "bun:sqlite";

/** How far a long migration step is (e.g. 412,000 of 1,000,000 messages indexed). */
export type MigrationProgress = (p: { task: string; done: number; total: number }) => void;

/**
 * A migration: SQL run in one transaction; or one that rebuilds tables others refer to, run with foreign
 * keys off (SQLite's table-rebuild procedure) and checked with `foreign_key_check` before it commits; or
 * SQL followed, in the same transaction, by a `backfill` that fills what it created and reports progress.
 */
export type Migration =
  | string
  | { sql: string; rebuildsTables: true }
  | { sql: string; backfill: (db: Database, progress: MigrationProgress) => void };
