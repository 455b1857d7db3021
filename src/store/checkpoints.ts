/**
 * WAL checkpoints kept off the write path. SQLite's automatic checkpoint runs inside the commit that
 * crosses its threshold, so that commit also copies the WAL into the database and syncs it: at the
 * default 1,000 pages a 500-message catch-up batch paid for one almost every time (bench/search-profile.ts).
 * Here the threshold is CAP_PAGES, a bound on the WAL that only sustained writing reaches (a catch-up),
 * and a store written and then left idle for IDLE_MS gets a PASSIVE checkpoint between writes (it never
 * waits for readers; what it cannot copy now waits for the next idle moment or the cap).
 */
import type { Database } from "bun:sqlite";

/** The automatic checkpoint's threshold in WAL pages (40 MiB at 4 KiB pages). */
export const CAP_PAGES = 10_000;
export const IDLE_MS = 1000;

/** Starts the idle checkpoints of `db`; the returned function stops them (before closing it). */
export function checkpointWhenIdle(db: Database): () => void {
  db.run(`PRAGMA wal_autocheckpoint = ${CAP_PAGES}`);
  const changes = db.prepare<{ n: number }, []>("SELECT total_changes() AS n");
  let seen = changes.get()?.n ?? 0;
  let checkpointed = seen;
  const timer = setInterval(() => {
    const n = changes.get()?.n ?? 0;
    if (n === seen && n !== checkpointed) {
      try {
        db.run("PRAGMA wal_checkpoint(PASSIVE)");
        checkpointed = n;
      } catch {
        // Not now (the database busy or locked): the next idle tick tries again, the cap still holds.
      }
    }
    seen = n;
  }, IDLE_MS);
  timer.unref();
  return () => clearInterval(timer);
}
