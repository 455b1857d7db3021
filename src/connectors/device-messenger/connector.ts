/**
 * The device-messenger (iMessage) connector: the poller on a timer plus file-change notifications on
 * chat.db's directory, the sender, and a health report with the reader's lag. `start` opens chat.db (placing
 * a first cursor) and returns; the backlog is read in the background. A notification reads at once (leading
 * edge); the burst's other notifications coalesce into one more read.
 */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { withDeadline } from "../../core/deadline.ts";
import type { IdFactory } from "../../core/ids.ts";
import { type Names, NO_NAMES } from "../../core/names.ts";
import type { Clock, Logger, Spawner } from "../../core/ports.ts";
import type { Ingest } from "../../ingest/ingest.ts";
import type { CursorStore } from "../../store/cursors.ts";
import type { Connector, ConnectorHealth } from "../connector.ts";
import { createPoller, type PollerStatus } from "./poller.ts";
import { createSender, sweepStagedSends } from "./sender.ts";

/**
 * Messages' writes notify just before their commit is visible (about 0.7 ms before, while its fsync
 * runs), so reads after a notification repeat: on every turn of the event loop for SPIN_MS after the last
 * notification (the commit is seen within tens of microseconds of becoming visible, not at the next
 * timer), then after RECHECK_MS, doubling each time, until RECHECK_WINDOW_MS after it: the read a
 * burst's last notification starts may find only the burst's earlier rows. Each repeat costs
 * `PRAGMA data_version` when nothing changed; without notifications nothing repeats (idle costs nothing).
 */
export const SPIN_MS = 3;
export const RECHECK_MS = 1;
export const RECHECK_WINDOW_MS = 50;
export const STALL_AFTER_MS = 10_000;
const ERROR_LOG_EVERY_MS = 60_000;

type Poller = ReturnType<typeof createPoller>;

export interface DeviceMessengerOptions {
  chatDbPath: string;
  pollIntervalMs: number;
  /** File-change notifications on chat.db's directory (the timer runs either way). */
  watchFiles: boolean;
  osascriptPath: string;
  osascriptTimeoutMs?: number;
  osascriptEnv: Record<string, string>;
  attachmentDir: string;
  attachmentMaxBytes: number;
  backfillFenceMinutes: number;
  attachmentWaitMs: number;
  homeDir: string;
  cursors: CursorStore;
  ids: IdFactory;
  clock: Clock;
  log: Logger;
  spawner: Spawner;
  /** Contacts names for senders; the first chat.db read waits (at most NAMES_WAIT_MS) for the first reading. */
  names?: Names;
}

/** How long the first chat.db read waits for the address book, so the first messages already get names. */
export const NAMES_WAIT_MS = 3_000;

/**
 * The health of the reader, from the poller's status: `starting` before the first read; `error` when
 * chat.db cannot be opened (the detail says how to fix it; the timer keeps retrying); `degraded` while
 * queries on the open chat.db fail (locked by another program, damaged), or when unread rows have waited
 * longer than STALL_AFTER_MS; else `ok`.
 */
function readerHealth(s: PollerStatus | undefined, now: number): ConnectorHealth {
  if (!s) return { state: "starting", detail: "Opening chat.db." };
  if (s.error) return { state: "error", detail: s.error };
  if (s.readError) {
    const age = Math.round((now - s.readError.sinceMs) / 1000);
    return { state: "degraded", detail: `${s.readError.text} Failing for ${age} s.` };
  }
  const behind = Math.max(0, (s.maxRowid ?? 0) - (s.cursor ?? 0));
  if (s.behindSinceMs !== null && now - s.behindSinceMs > STALL_AFTER_MS) {
    const age = Math.round((now - s.behindSinceMs) / 1000);
    return { state: "degraded", detail: `Reading chat.db is stalled: ${behind} rows waiting for ${age} s.` };
  }
  const notes = [
    s.pending > 0 ? `${s.pending} message(s) waiting for attachments still downloading` : "",
    s.fenced > 0 ? `${s.fenced} old row(s) held back as iCloud backfill so far` : "",
  ].filter(Boolean);
  const base = behind === 0 ? "Up to date with chat.db" : `Reading chat.db: ${behind} rows behind`;
  return { state: "ok", detail: `${[base, ...notes].join("; ")}.` };
}

/**
 * Ticks of the poller, never overlapping (a tick awaits attachment copies: a wake-up during one runs one
 * more after it); a failure is logged when it changes and once a minute while it lasts. `pickUp` is the
 * leading-edge read of a file notification, repeated (spinning, then backing off) while the
 * notification's window lasts.
 */
function createTicks(poller: () => Poller | null, clock: Clock, log: Logger) {
  let lastError = { text: "", at: 0 };
  let running: Promise<void> | null = null;
  let again = false;
  /** Cancels the scheduled repeat (null: none). */
  let recheck: (() => void) | null = null;
  let spinUntil = 0;
  let recheckUntil = 0;
  let delay = RECHECK_MS;
  const tickOnce = async () => {
    const p = poller();
    if (!p) return;
    try {
      await p.tick();
      lastError = { text: "", at: 0 };
    } catch (err) {
      const text = String(err);
      if (text !== lastError.text || clock.now() - lastError.at > ERROR_LOG_EVERY_MS) {
        log.error({ err: text }, "reading chat.db failed; retrying on the next tick");
        lastError = { text, at: clock.now() };
      }
    }
  };
  const run = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await tickOnce();
      } while (again && poller());
    })().finally(() => {
      running = null;
    });
    return running;
  };
  const pickUp = async (): Promise<void> => {
    await run();
    if (!poller() || recheck || clock.now() >= recheckUntil) return;
    const repeat = () => {
      recheck = null;
      void pickUp();
    };
    if (clock.now() < spinUntil) {
      const turn = setImmediate(repeat);
      recheck = () => clearImmediate(turn);
    } else {
      const timer = setTimeout(repeat, delay);
      delay *= 2;
      recheck = () => clearTimeout(timer);
    }
  };
  return {
    run,
    /** A file notification: read now, and again shortly while nothing new is visible. */
    notified(): void {
      spinUntil = clock.now() + SPIN_MS;
      recheckUntil = clock.now() + RECHECK_WINDOW_MS;
      delay = RECHECK_MS;
      recheck?.();
      recheck = null;
      void pickUp();
    },
    /** Stops rechecks; resolves when the tick in progress ends. */
    async stop(): Promise<void> {
      recheck?.();
      await running;
    },
  };
}

/** Notifications of changes to chat.db, its WAL or SHM (null when the system gives none). */
function watchChatDb(path: string, onChange: () => void, log: Logger): FSWatcher | null {
  try {
    const names = new Set([basename(path), `${basename(path)}-wal`, `${basename(path)}-shm`]);
    const watcher = watch(dirname(path), (_event, file) => {
      if (file === null || names.has(String(file))) onChange();
    });
    watcher.on("error", () => watcher.close());
    return watcher;
  } catch (err) {
    log.warn({ err: String(err) }, "no file-change notifications for chat.db; polling only");
    return null;
  }
}

export function createDeviceMessenger(o: DeviceMessengerOptions): Connector {
  const log = o.log.child({ connector: "device_messenger" });
  let poller: Poller | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let watcher: FSWatcher | null = null;
  let watchFailed = false;
  const ticks = createTicks(() => poller, o.clock, log);
  const arm = () => {
    watchFailed = false;
    watcher = watchChatDb(o.chatDbPath, ticks.notified, log);
    watcher?.on("error", () => {
      watchFailed = true;
    });
  };
  const send = createSender({
    osascriptPath: o.osascriptPath,
    ...(o.osascriptTimeoutMs ? { osascriptTimeoutMs: o.osascriptTimeoutMs } : {}),
    homeDir: o.homeDir,
    env: o.osascriptEnv,
    spawner: o.spawner,
    clock: o.clock,
    log,
    chatDb: () => poller?.chatDb() ?? null,
    sleep: (ms) => Bun.sleep(ms),
  });

  return {
    source: "device_messenger",
    async start(ingest: Ingest) {
      sweepStagedSends(o.homeDir, o.clock.now(), log);
      const names = o.names ?? NO_NAMES;
      poller = createPoller(
        {
          chatDbPath: o.chatDbPath,
          attachmentDir: o.attachmentDir,
          attachmentMaxBytes: o.attachmentMaxBytes,
          homeDir: o.homeDir,
          backfillFenceMs: o.backfillFenceMinutes * 60_000,
          attachmentWaitMs: o.attachmentWaitMs,
          cursors: o.cursors,
          ids: o.ids,
          clock: o.clock,
          log,
          names,
        },
        ingest,
      );
      poller.open();
      const mine = poller;
      // The first read waits (at most NAMES_WAIT_MS) for the address book, so the first messages get names;
      // start() itself does not wait (the other connectors start meanwhile).
      void withDeadline(names.ready(), NAMES_WAIT_MS, () => undefined).then(() => {
        if (poller !== mine) return;
        void ticks.run();
        timer = setInterval(() => {
          if (o.watchFiles && (!watcher || watchFailed)) arm();
          void ticks.run();
        }, o.pollIntervalMs);
        if (o.watchFiles) arm();
      });
    },
    async stop() {
      if (timer) clearInterval(timer);
      watcher?.close();
      const current = poller;
      current?.stop();
      poller = null;
      await ticks.stop();
      current?.close();
    },
    send,
    health: (): ConnectorHealth => readerHealth(poller?.status(), o.clock.now()),
  };
}
