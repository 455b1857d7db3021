/**
 * A long migration's progress as log lines ("indexing messages for search: 412,000 of 1,000,000"), at
 * most one every PROGRESS_EVERY_MS of the injected clock, the first one that long after the start: a
 * migration that ends sooner logs nothing.
 */
import type { Clock, Logger } from "../core/ports.ts";
import type { MigrationProgress } from "./migration-types.ts";

export const PROGRESS_EVERY_MS = 2000;

const count = (n: number) => n.toLocaleString("en-US");

export function progressLogger(log: Logger, clock: Clock, everyMs = PROGRESS_EVERY_MS): MigrationProgress {
  let last = clock.now();
  return ({ task, done, total }) => {
    const now = clock.now();
    if (now - last < everyMs) return;
    last = now;
    log.info({ task, done, total }, `${task}: ${count(done)} of ${count(total)}`);
  };
}
