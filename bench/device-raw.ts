/**
 * Child process of bench/device.ts: the raw baselines, reading the same chat.db without gw.
 *
 *   bun run bench/device-raw.ts poll   <chat.db> <interval ms>
 *   bun run bench/device-raw.ts watch  <chat.db>
 *   bun run bench/device-raw.ts select <chat.db> <after ROWID> <repeats>
 *
 * poll:   a bare loop on a read-only connection: every <interval> ms `PRAGMA data_version`, and when it
 *         moved `SELECT MAX(ROWID) FROM message`. Prints `{"seen":<max rowid>,"t":<now>}` when MAX(ROWID)
 *         grows.
 * watch:  fs.watch on chat.db's directory (chat.db, -wal, -shm, as the connector filters), no debounce:
 *         on every event the same two queries at once, and, while the new row is not visible yet, again
 *         every 1 ms for up to 250 ms (events fire on the WAL write, before the commit's fsync ends).
 *         Prints `{"event":<now>}` for every such event (the raw wake-up) and `{"seen","t","tEvent"}` when
 *         the new row is visible (tEvent: first event of that burst).
 * select: the backlog baselines, each `repeats` times on a fresh connection, then exits:
 *         `raw`    one SELECT of the new rows' columns (ROWID, guid, text, attributedBody, handle, date,
 *                  is_from_me) with .all(), nothing else;
 *         `reader` the connector's own read path: createPoller (rowsAfter in batches, attachment lookups,
 *                  attributedBody decoding, classification, normalisation) with a no-op ingest that only
 *                  moves an in-memory cursor, so the difference to gw is the ingest/store write.
 * Times use lib/child-protocol.ts `now()`; the commands of lib/child-protocol.ts are answered in poll/watch mode.
 */
import { Database } from "bun:sqlite";
import { watch } from "node:fs";
import { basename, dirname } from "node:path";
import { createPoller } from "../src/connectors/device-messenger/poller.ts";
import type { Source } from "../src/core/envelope.ts";
import { createIdFactory } from "../src/core/ids.ts";
import { type Logger, systemClock } from "../src/core/ports.ts";
import type { CursorRow } from "../src/store/cursors.ts";
import { emit, now, serveCommands } from "./lib/child-protocol.ts";

const [mode, path, arg] = process.argv.slice(2);
if ((mode !== "poll" && mode !== "watch" && mode !== "select") || !path) {
  process.stderr.write("usage: bun run bench/device-raw.ts <poll|watch|select> <chat.db> [arg]\n");
  process.exit(2);
}

function openReadOnly() {
  const db = new Database(path as string, { readonly: true });
  db.run("PRAGMA busy_timeout = 5000");
  const version = db.query<{ data_version: number }, []>("PRAGMA data_version");
  const max = db.query<{ m: number | null }, []>("SELECT MAX(ROWID) AS m FROM message");
  return { db, version: () => version.get()?.data_version ?? 0, max: () => max.get()?.m ?? 0 };
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

if (mode === "poll" || mode === "watch") {
  const c = openReadOnly();
  let lastVersion = c.version();
  let seen = c.max();
  /** The two queries; true when a new MAX(ROWID) was seen (and reported). */
  const check = (tEvent: number | null): boolean => {
    const v = c.version();
    if (v === lastVersion) return false;
    lastVersion = v;
    const m = c.max();
    if (m <= seen) return false;
    seen = m;
    emit({ seen: m, t: now(), tEvent });
    return true;
  };
  let stop: () => void;
  if (mode === "poll") {
    const interval = Number(arg ?? 1000);
    const timer = setInterval(() => check(null), interval);
    stop = () => clearInterval(timer);
  } else {
    const names = new Set([basename(path), `${basename(path)}-wal`, `${basename(path)}-shm`]);
    let firstEvent: number | null = null;
    let spin: ReturnType<typeof setInterval> | null = null;
    let deadline = 0;
    const done = () => {
      if (spin) clearInterval(spin);
      spin = null;
      firstEvent = null;
    };
    const watcher = watch(dirname(path), (_event, file) => {
      if (file !== null && !names.has(String(file))) return;
      const t = now();
      emit({ event: t });
      firstEvent ??= t;
      if (check(firstEvent)) return done();
      deadline = t + 250;
      spin ??= setInterval(() => {
        if (check(firstEvent) || now() > deadline) done();
      }, 1);
    });
    stop = () => {
      watcher.close();
      done();
    };
  }
  emit({ ready: 0, seen });
  await serveCommands(() => {
    stop();
    c.db.close();
  });
} else {
  const after = Number(arg ?? 0);
  const repeats = Number(process.argv[5] ?? 3);
  const raw: number[] = [];
  const reader: number[] = [];
  let rawRows = 0;
  let readerRows = 0;
  for (let i = 0; i < repeats; i++) {
    const c = openReadOnly();
    const q = c.db.query<Record<string, unknown>, [number]>(
      `SELECT ROWID AS rowid, guid, text, attributedBody, handle_id, date, is_from_me
       FROM message WHERE ROWID > ?1 ORDER BY ROWID`,
    );
    const t0 = performance.now();
    rawRows = q.all(after).length;
    raw.push(performance.now() - t0);
    c.db.close();

    let cursor: CursorRow | null = {
      source: "device_messenger",
      position: String(after),
      updated_at: 0,
      state: null,
    };
    const cursors = {
      get: (_s: Source) => cursor,
      set: (source: Source, position: string, t: number, state: string | null = null) => {
        cursor = { source, position, updated_at: t, state };
      },
    };
    let normalized = 0;
    const poller = createPoller(
      {
        chatDbPath: path,
        attachmentDir: "/nonexistent-bench-attachments",
        attachmentMaxBytes: 0,
        homeDir: "/nonexistent-bench-home",
        backfillFenceMs: 0,
        attachmentWaitMs: 0,
        cursors,
        ids: createIdFactory(systemClock),
        clock: systemClock,
        log: silent,
      },
      (batch) => {
        normalized += batch.messages.length;
        if (batch.cursor !== null)
          cursors.set(batch.source, batch.cursor, Date.now(), batch.cursorState ?? null);
        return [];
      },
    );
    const t1 = performance.now();
    readerRows = await poller.tick();
    reader.push(performance.now() - t1);
    poller.close();
    if (i === 0) emit({ normalized });
  }
  emit({ select: { rawMs: raw, rawRows, readerMs: reader, readerRows } });
  process.exit(0);
}
