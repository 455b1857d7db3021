/**
 * Child process of bench/pickup/pickup.ts: the floors, reading the same chat.db without gw (from the retired
 * bench/device-raw.ts).
 *
 *   bun run bench/pickup/raw.ts watch <chat.db>
 *   bun run bench/pickup/raw.ts poll  <chat.db> <interval ms>
 *
 * watch: fs.watch on chat.db's directory (chat.db, -wal, -shm: the connector's filter), no debounce.
 *        Every event is reported as `{"event":<now>}` (the wake-up floor). On an event it runs
 *        `PRAGMA data_version` and, when that moved, `SELECT MAX(ROWID) FROM message`; while no new row
 *        is visible it repeats them every 1 ms for up to 250 ms (the events fire on the WAL write, before
 *        the commit is visible). A new MAX(ROWID) is reported as `{"seen":<rowid>,"t":<now>}` (the
 *        "row readable" floor).
 * poll:  the same two queries on a timer of <interval> ms, nothing else (the notifications-off floor).
 * Stamps are lib/child-protocol.ts `now()`; the commands of lib/child-protocol.ts are answered.
 */
import { Database } from "bun:sqlite";
import { watch } from "node:fs";
import { basename, dirname } from "node:path";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const [mode, path, arg] = process.argv.slice(2);
if ((mode !== "poll" && mode !== "watch") || !path) {
  process.stderr.write("usage: bun run bench/pickup/raw.ts <watch|poll> <chat.db> [interval ms]\n");
  process.exit(2);
}

const db = new Database(path, { readonly: true });
db.run("PRAGMA busy_timeout = 5000");
const versionQ = db.query<{ data_version: number }, []>("PRAGMA data_version");
const maxQ = db.query<{ m: number | null }, []>("SELECT MAX(ROWID) AS m FROM message");
let lastVersion = versionQ.get()?.data_version ?? 0;
let seen = maxQ.get()?.m ?? 0;

/** The two queries; true when a new MAX(ROWID) was seen (and reported). */
const check = (): boolean => {
  const v = versionQ.get()?.data_version ?? 0;
  if (v === lastVersion) return false;
  lastVersion = v;
  const m = maxQ.get()?.m ?? 0;
  if (m <= seen) return false;
  seen = m;
  emit({ seen: m, t: now() });
  return true;
};

let stop: () => void;
if (mode === "poll") {
  const timer = setInterval(check, Number(arg ?? 1000));
  stop = () => clearInterval(timer);
} else {
  const names = new Set([basename(path), `${basename(path)}-wal`, `${basename(path)}-shm`]);
  let spin: ReturnType<typeof setInterval> | null = null;
  let deadline = 0;
  const done = () => {
    if (spin) clearInterval(spin);
    spin = null;
  };
  const watcher = watch(dirname(path), (_event, file) => {
    if (file !== null && !names.has(String(file))) return;
    const t = now();
    emit({ event: t });
    if (check()) return done();
    deadline = t + 250;
    spin ??= setInterval(() => {
      if (check() || now() > deadline) done();
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
  db.close();
});
