/**
 * The device-messenger (iMessage) connector: the poller on a timer plus file-change notifications on
 * chat.db's directory, the sender, and a health report with the reader's lag. Pick-up is leading-edge:
 * a notification reads at once, and since Messages' writes notify just before its commit is visible,
 * a read that finds nothing new is repeated every RECHECK_MS for up to RECHECK_WINDOW_MS; the burst's
 * other notifications coalesce into one more read. `start` opens chat.db (placing a first cursor) and
 * returns; the backlog is read in the background. States: `ok`; `starting` before the first read;
 * `error` when chat.db cannot be opened (the detail says how to fix it; the timer keeps retrying);
 * `degraded` while queries on the open chat.db fail (locked by another program, damaged), or when
 * unread rows have waited longer than STALL_AFTER_MS.
 */
import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { IdFactory } from "../../core/ids.ts";
import type { Clock, Logger, Spawner } from "../../core/ports.ts";
import type { Ingest } from "../../ingest/ingest.ts";
import type { CursorStore } from "../../store/cursors.ts";
import type { Connector, ConnectorHealth } from "../connector.ts";
import { createPoller } from "./poller.ts";
import { createSender, sweepStagedSends } from "./sender.ts";

export const RECHECK_MS = 1;
export const RECHECK_WINDOW_MS = 50;
export const STALL_AFTER_MS = 10_000;
const ERROR_LOG_EVERY_MS = 60_000;

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
}

export function createDeviceMessenger(o: DeviceMessengerOptions): Connector {
  const log = o.log.child({ connector: "device_messenger" });
  let poller: ReturnType<typeof createPoller> | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let watcher: FSWatcher | null = null;
  let recheck: ReturnType<typeof setTimeout> | null = null;
  let recheckUntil = 0;
  let started = false;

  let lastError = { text: "", at: 0 };
  let lastSeen = 0;
  const tickOnce = async () => {
    if (!poller) return;
    try {
      lastSeen = await poller.tick();
      lastError = { text: "", at: 0 };
    } catch (err) {
      // The same failure repeats every tick: log it when it changes, and once a minute while it lasts.
      const text = String(err);
      if (text !== lastError.text || o.clock.now() - lastError.at > ERROR_LOG_EVERY_MS) {
        log.error({ err: text }, "reading chat.db failed; retrying on the next tick");
        lastError = { text, at: o.clock.now() };
      }
    }
  };
  // Ticks never overlap (a tick awaits attachment copies): a wake-up during one runs one more after it.
  let running: Promise<void> | null = null;
  let again = false;
  const runTick = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await tickOnce();
      } while (again && poller);
    })().finally(() => {
      running = null;
    });
    return running;
  };

  /** A read now; when it finds nothing new (the commit is not visible yet), again shortly. */
  const pickUp = async () => {
    await runTick();
    if (lastSeen > 0 || !poller || recheck || o.clock.now() >= recheckUntil) return;
    recheck = setTimeout(() => {
      recheck = null;
      void pickUp();
    }, RECHECK_MS);
  };

  const arm = () => {
    try {
      const names = new Set([
        basename(o.chatDbPath),
        `${basename(o.chatDbPath)}-wal`,
        `${basename(o.chatDbPath)}-shm`,
      ]);
      watcher = watch(dirname(o.chatDbPath), (_event, file) => {
        if (file !== null && !names.has(String(file))) return;
        recheckUntil = o.clock.now() + RECHECK_WINDOW_MS;
        void pickUp();
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = null;
      });
    } catch (err) {
      log.warn({ err: String(err) }, "no file-change notifications for chat.db; polling only");
    }
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
        },
        ingest,
      );
      poller.open();
      started = true;
      void runTick();
      timer = setInterval(() => {
        if (o.watchFiles && !watcher) arm();
        void runTick();
      }, o.pollIntervalMs);
      if (o.watchFiles) arm();
    },
    async stop() {
      if (timer) clearInterval(timer);
      if (recheck) clearTimeout(recheck);
      watcher?.close();
      const current = poller;
      current?.stop();
      poller = null;
      await running;
      current?.close();
    },
    send,
    health(): ConnectorHealth {
      const s = poller?.status();
      if (!s || !started) return { state: "starting", detail: "Opening chat.db." };
      if (s.error) return { state: "error", detail: s.error };
      if (s.readError) {
        const age = Math.round((o.clock.now() - s.readError.sinceMs) / 1000);
        return { state: "degraded", detail: `${s.readError.text} Failing for ${age} s.` };
      }
      const behind = Math.max(0, (s.maxRowid ?? 0) - (s.cursor ?? 0));
      if (s.behindSinceMs !== null && o.clock.now() - s.behindSinceMs > STALL_AFTER_MS) {
        const age = Math.round((o.clock.now() - s.behindSinceMs) / 1000);
        return {
          state: "degraded",
          detail: `Reading chat.db is stalled: ${behind} rows waiting for ${age} s.`,
        };
      }
      const notes = [
        s.pending > 0 ? `${s.pending} message(s) waiting for attachments still downloading` : "",
        s.fenced > 0 ? `${s.fenced} old row(s) held back as iCloud backfill so far` : "",
      ].filter(Boolean);
      const base = behind === 0 ? "Up to date with chat.db" : `Reading chat.db: ${behind} rows behind`;
      return { state: "ok", detail: `${[base, ...notes].join("; ")}.` };
    },
  };
}
