/**
 * chat.db files of six macOS releases, built from the `CREATE TABLE` dumps in
 * shared/fixtures/chatdb/versions (Apache-2.0, BlueBubbles; read in place, never copied into this repo):
 * a release's own tables, and Big Sur's for those its folder lacks (the join tables are the same in every
 * release). Each table is taken by the name its statement creates, not by its file name: Sequoia's
 * message_processing_task.sql holds recoverable_message_part (README quirk), so Sequoia has no
 * message_processing_task, which gw never reads. No indexes or triggers are added (the dumps have none);
 * at the few hundred rows a test writes, gw's queries need none of them.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ChatDbWriter, openChatDbWriter } from "../../src/demo/chatdb-writer.ts";

export const VERSIONS_DIR = join(import.meta.dir, "../../../shared/fixtures/chatdb/versions");

export const RELEASES = ["big-sur", "monterey", "ventura", "sonoma", "sequoia", "tahoe"] as const;
export type ReleaseName = (typeof RELEASES)[number];

/** The folder tables missing from a release's own folder come from. */
const BASE: ReleaseName = "big-sur";

/** One `CREATE TABLE` statement per table name, from one release folder. */
function tablesIn(release: ReleaseName): Map<string, string> {
  const dir = join(VERSIONS_DIR, release);
  const tables = new Map<string, string>();
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()) {
    const sql = readFileSync(join(dir, file), "utf8").trim();
    const name = /^CREATE TABLE\s+(?:IF NOT EXISTS\s+)?["`[]?(\w+)/i.exec(sql)?.[1];
    if (!name) throw new Error(`${release}/${file} holds no CREATE TABLE statement`);
    if (!tables.has(name)) tables.set(name, sql);
  }
  return tables;
}

/** The schema of a release's chat.db: its own tables, then Big Sur's for the ones it lacks. */
export function releaseSchemaSql(release: ReleaseName): string {
  const own = tablesIn(release);
  const base = tablesIn(BASE);
  for (const [name, sql] of base) if (!own.has(name)) own.set(name, sql);
  return [...own.values()].map((s) => `${s.replace(/;\s*$/, "")};`).join("\n");
}

/** The column names of every table of a release's chat.db (an in-memory build of releaseSchemaSql). */
export function releaseColumns(release: ReleaseName): Record<string, string[]> {
  const db = new Database(":memory:");
  try {
    db.exec(releaseSchemaSql(release));
    const tables = db
      .query<{ name: string }, []>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
      )
      .all();
    return Object.fromEntries(
      tables.map(({ name }) => [
        name,
        db
          .query<{ name: string }, []>(`PRAGMA table_info(${name})`)
          .all()
          .map((c) => c.name),
      ]),
    );
  } finally {
    db.close();
  }
}

/**
 * `<dir>/Library/Messages/chat.db` with a release's tables (and nothing else), and the project's writer
 * opened on it: the writer applies no schema of its own to a database that has a `message` table.
 */
export function chatDbOfRelease(release: ReleaseName, dir: string): { path: string; writer: ChatDbWriter } {
  const path = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true });
  try {
    db.run("PRAGMA journal_mode = WAL");
    db.exec(releaseSchemaSql(release));
  } finally {
    db.close();
  }
  return { path, writer: openChatDbWriter(path) };
}
