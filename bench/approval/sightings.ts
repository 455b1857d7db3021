/**
 * bench/approval/approval.ts's observers, all in this process on one clock (performance.now()): a table of
 * sightings (first instant each key was seen; waiters by key) and the chat.db watcher that sights each
 * prompt row the Messages stand-in commits.
 *
 * The watcher reads chat.db on its own read-only connection: `PRAGMA data_version` and, when it moved,
 * the `message` rows after the last ROWID seen; an `is_from_me` row whose text (attributedBody decoded as
 * gw decodes it) holds `Reply "yes <id>"` is sighted as `imessage:<id>`. It runs on every fs.watch event
 * of chat.db's directory (the WAL write fires before the commit is visible) and, while a prompt is awaited
 * (`arm`), on a WATCH_POLL_MS timer as well; the timer's real period is recorded as the resolution.
 */
import { Database } from "bun:sqlite";
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { rowText } from "../../src/connectors/device-messenger/rows.ts";
import { WATCH_POLL_MS } from "./settings.ts";

/** The request id in a prompt's text (`Reply "yes abcde" or "no abcde".`), or null. */
export const promptId = (text: string): string | null => /"yes ([a-km-z]{5})"/.exec(text)?.[1] ?? null;

export interface Sightings {
  /** Records the first sighting of `key` at `t` (later ones are ignored) and wakes its waiter. */
  record(key: string, t: number): void;
  /** The instant `key` was first seen, waiting up to `timeoutMs`; null when it was not. */
  wait(key: string, timeoutMs: number): Promise<number | null>;
}

export function createSightings(): Sightings {
  const seen = new Map<string, number>();
  const waiters = new Map<string, (t: number) => void>();
  return {
    record(key, t) {
      if (seen.has(key)) return;
      seen.set(key, t);
      waiters.get(key)?.(t);
    },
    wait(key, timeoutMs) {
      const t = seen.get(key);
      if (t !== undefined) return Promise.resolve(t);
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(key);
          resolve(null);
        }, timeoutMs);
        waiters.set(key, (at) => {
          clearTimeout(timer);
          waiters.delete(key);
          resolve(at);
        });
      });
    },
  };
}

export interface WatchStats {
  /** Prompt rows first sighted on a file event, and on the timer. */
  byEvent: number;
  byTimer: number;
  /** Gaps between the timer's runs while armed (ms): the resolution of a timer sighting. */
  tickGapsMs: number[];
}

type Row = { rowid: number; is_from_me: number; text: string | null; body: Uint8Array | null };

export function watchChatDb(path: string, sightings: Sightings) {
  const db = new Database(path, { readonly: true });
  db.run("PRAGMA busy_timeout = 5000");
  const versionQ = db.query<{ data_version: number }, []>("PRAGMA data_version");
  const rowsQ = db.query<Row, [number]>(
    "SELECT ROWID AS rowid, is_from_me, text, attributedBody AS body FROM message WHERE ROWID > ? ORDER BY ROWID",
  );
  const maxQ = db.query<{ m: number | null }, []>("SELECT MAX(ROWID) AS m FROM message");
  let version = versionQ.get()?.data_version ?? 0;
  let last = maxQ.get()?.m ?? 0;
  const stats: WatchStats = { byEvent: 0, byTimer: 0, tickGapsMs: [] };

  const check = (by: "event" | "timer") => {
    const t = performance.now();
    const v = versionQ.get()?.data_version ?? 0;
    if (v === version) return;
    version = v;
    for (const r of rowsQ.all(last)) {
      last = r.rowid;
      const id = r.is_from_me === 1 ? promptId(rowText(r) ?? "") : null;
      if (!id) continue;
      sightings.record(`imessage:${id}`, t);
      if (by === "event") stats.byEvent += 1;
      else stats.byTimer += 1;
    }
  };

  const names = new Set([basename(path), `${basename(path)}-wal`, `${basename(path)}-shm`]);
  const watcher: FSWatcher = watch(dirname(path), (_e, file) => {
    if (file === null || names.has(String(file))) check("event");
  });
  let timer: ReturnType<typeof setInterval> | null = null;
  let lastTick = 0;

  return {
    stats,
    /** Runs the timer too until the returned function is called. */
    arm(): () => void {
      lastTick = performance.now();
      timer ??= setInterval(() => {
        const t = performance.now();
        stats.tickGapsMs.push(t - lastTick);
        lastTick = t;
        check("timer");
      }, WATCH_POLL_MS);
      return () => {
        if (timer) clearInterval(timer);
        timer = null;
      };
    },
    close(): void {
      if (timer) clearInterval(timer);
      watcher.close();
      db.close();
    },
  };
}

export type ChatDbWatcher = ReturnType<typeof watchChatDb>;
