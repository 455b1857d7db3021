/**
 * What lets the operator commands reach a listening service, `gw serve` or `gw demo`: its pid file next to
 * the state database (`gw allow` sends SIGHUP to the process it names) and SIGHUP reloading the allowlist.
 * Returns what the ordered stop's `finish` calls (the pid file removed if it still names this process).
 */
import type { Logger } from "../core/ports.ts";
import { pidFileOf, removePidFile, writePidFile } from "./pid-file.ts";

export function makeReachable(o: {
  dbPath: string;
  reload: () => boolean;
  log: Logger;
  events: Pick<NodeJS.Process, "on">;
}): () => void {
  const pidFile = pidFileOf(o.dbPath);
  writePidFile(pidFile, process.pid);
  o.events.on("SIGHUP", () => {
    o.log.info({}, "SIGHUP: reloading the allowlist");
    o.reload();
  });
  return () => removePidFile(pidFile, process.pid);
}
