/**
 * Attachment retention (spec Limits): once shortly after start-up and then daily, deletes the stored bytes of
 * attachments created more than GW_ATTACHMENT_RETENTION_DAYS ago and clears their stored-bytes reference; the
 * records stay, so envelopes still list them and fetching them is a 404. The same runs delete orphaned files;
 * nothing else in the directory is touched.
 */
import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ATTACHMENT_ID_RE } from "../core/ids.ts";
import type { Clock, Logger } from "../core/ports.ts";
import type { AttachmentStore } from "../store/attachments.ts";

export const SWEEP_INTERVAL_MS = 24 * 60 * 60 * 1000;
/**
 * File times come from the kernel's coarse clock, up to a tick behind Date.now() (6.4 ms measured on a
 * Linux CI machine): a file this process re-hosts in its first instants can carry a time before its
 * start. A file missing from the start's listing is an orphan only when older than the start by this much.
 */
export const FILE_CLOCK_SLACK_MS = 2_000;
const BATCH = 500;

export function createAttachmentSweeper(deps: {
  attachments: AttachmentStore;
  dir: string;
  retentionDays: number;
  clock: Clock;
  log: Logger;
}) {
  // File times are the file system's wall clock, so this one is too (not the injected Clock).
  const startedAtMs = Date.now();
  // The directory as this process found it, listed before any connector re-hosts a file (the sweeper is
  // made while the service is built); released by the first sweep.
  let atStart: Set<string> | null = new Set(existsSync(deps.dir) ? readdirSync(deps.dir) : []);

  /**
   * Orphans: files named like an attachment id that no record names and that were there before this process
   * began: in the start's listing, or dated FILE_CLOCK_SLACK_MS before the start (a kill between re-hosting
   * a file and storing its message leaves one, however soon the restart). Files this process is writing
   * are in neither, so they are never touched, not even during the start-up catch-up.
   */
  const sweepOrphans = (): number => {
    const listed = atStart;
    atStart = null;
    if (!existsSync(deps.dir)) return 0;
    let removed = 0;
    for (const name of readdirSync(deps.dir)) {
      if (!ATTACHMENT_ID_RE.test(name) || deps.attachments.get(name)?.file_name === name) continue;
      const path = join(deps.dir, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      const before =
        listed?.has(name) || (stat?.mtimeMs ?? Number.POSITIVE_INFINITY) < startedAtMs - FILE_CLOCK_SLACK_MS;
      if (!stat?.isFile() || !before) continue;
      rmSync(path, { force: true });
      removed++;
    }
    if (removed > 0)
      deps.log.warn(
        { removed },
        "orphaned attachment files deleted (re-hosted before a crash, never stored)",
      );
    return removed;
  };

  const sweepOnce = (): number => {
    const cutoff = deps.clock.now() - deps.retentionDays * 24 * 60 * 60 * 1000;
    let removed = 0;
    for (;;) {
      const due = deps.attachments.storedBefore(cutoff, BATCH);
      for (const a of due) {
        rmSync(join(deps.dir, a.file_name as string), { force: true });
        deps.attachments.clearFile(a.id);
      }
      removed += due.length;
      if (due.length < BATCH) break;
    }
    if (removed > 0)
      deps.log.info(
        { removed, retention_days: deps.retentionDays },
        "attachment bytes past retention deleted",
      );
    return removed;
  };

  let startTimer: ReturnType<typeof setTimeout> | null = null;
  let dailyTimer: ReturnType<typeof setInterval> | null = null;
  const guarded = () => {
    try {
      sweepOnce();
      sweepOrphans();
    } catch (err) {
      deps.log.error({ err }, "attachment sweep failed; next run in a day");
    }
  };
  return {
    /** Date.now() when this process's sweeper was made: the line between an orphan and a file being written. */
    startedAtMs,
    sweepOnce,
    sweepOrphans,
    start(): void {
      startTimer = setTimeout(guarded, 0);
      dailyTimer = setInterval(guarded, SWEEP_INTERVAL_MS);
    },
    stop(): void {
      if (startTimer) clearTimeout(startTimer);
      if (dailyTimer) clearInterval(dailyTimer);
    },
  };
}
