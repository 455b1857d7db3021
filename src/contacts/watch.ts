/**
 * File-change notifications for a Contacts folder (runner): one fs.watch per folder that can hold a
 * database — the folder itself (or, while it is missing, its parent, to see it appear), Sources/ and each
 * Sources/<id>/ — re-aimed whenever the folders change. Only names that can change what is read pass
 * (a database, its WAL, a source folder); SQLite's `-shm`, which readers write too, never does, so gw's own
 * reads wake nothing. A folder that cannot be watched is left to the caller's poll.
 */
import { type FSWatcher, readdirSync, statSync, watch } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Logger } from "../core/ports.ts";
import { ADDRESS_BOOK_FILE, SOURCES_DIR } from "./reader.ts";

interface Target {
  path: string;
  accepts(name: string): boolean;
}

const dbName = (name: string) => name.startsWith(ADDRESS_BOOK_FILE) && !name.endsWith("-shm");

/** The folders to watch for `dir` as it is now (pure over the file system's answer). */
export function watchTargets(dir: string): Target[] {
  if (!isDir(dir)) {
    const parent = dirname(dir);
    return isDir(parent) ? [{ path: parent, accepts: (n) => n === basename(dir) }] : [];
  }
  const sources = join(dir, SOURCES_DIR);
  const targets: Target[] = [{ path: dir, accepts: (n) => dbName(n) || n === SOURCES_DIR }];
  if (!isDir(sources)) return targets;
  targets.push({ path: sources, accepts: () => true });
  let names: string[] = [];
  try {
    names = readdirSync(sources);
  } catch {}
  for (const n of names.sort()) {
    const path = join(sources, n);
    if (isDir(path)) targets.push({ path, accepts: dbName });
  }
  return targets;
}

export interface FolderWatch {
  /** Watches what `dir` needs now; stops watching what it no longer does. */
  aim(dir: string): void;
  close(): void;
}

export function createFolderWatch(onChange: () => void, log: Logger): FolderWatch {
  /** Each watched folder with its inode: a folder removed and made again is watched anew. */
  const watching = new Map<string, { w: FSWatcher; ino: number }>();
  let warned = false;
  const drop = (path: string) => {
    watching.get(path)?.w.close();
    watching.delete(path);
  };
  return {
    aim(dir) {
      const targets = watchTargets(dir);
      const wanted = new Set(targets.map((t) => t.path));
      for (const [path, { ino }] of [...watching]) if (!wanted.has(path) || inodeOf(path) !== ino) drop(path);
      for (const t of targets) {
        const ino = inodeOf(t.path);
        if (watching.has(t.path) || ino === null) continue;
        try {
          const w = watch(t.path, (_event, name) => {
            if (name === null || t.accepts(String(name))) onChange();
          });
          w.on("error", () => drop(t.path));
          watching.set(t.path, { w, ino });
        } catch (err) {
          if (!warned)
            log.warn({ err: String(err), path: t.path }, "no change notifications for Contacts; polling");
          warned = true;
        }
      }
    },
    close() {
      for (const path of [...watching.keys()]) drop(path);
    },
  };
}

function inodeOf(path: string): number | null {
  try {
    return statSync(path).ino;
  } catch {
    return null;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
