/**
 * `gw serve`'s pid file, `gw.pid` next to the state database (0600): written once it listens, removed
 * when it stops, so operator commands (`gw allow`) can ask the running service to reload. A file whose
 * process is gone is stale and ignored.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

export const pidFileOf = (dbPath: string): string => join(dirname(dbPath), "gw.pid");

export function writePidFile(path: string, pid: number): void {
  writeFileSync(path, `${pid}\n`, { mode: 0o600 });
}

/** Removes the file if it still names this process. */
export function removePidFile(path: string, pid: number): void {
  if (readPid(path) === pid) rmSync(path, { force: true });
}

function readPid(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** The pid in the file when that process is alive, else null. */
export function livePid(path: string): number | null {
  const pid = readPid(path);
  if (pid === null) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}
