/**
 * bench/events/events.ts's idle part: `gw serve` (the real command from source, default settings: chat.db
 * notifications on, the 1000 ms timer, the iMessage edit re-check) on a chat.db of CHATDB_ROWS rows, next
 * to a bare Bun process (bench/lib/bare-bun.ts), CPU read from /proc only (lib/proc.ts: every thread's
 * schedstat every 500 ms, utime + stime as a cross-check).
 *
 * The chat.db (lib/chatdb.ts, Messages' schema, rows dated as Messages dates them) gets CHATDB_ROWS -
 * RECENT_ROWS rows spread over the 30 days before the last 16 minutes, all in one transaction, and this
 * process keeps it open as Messages would. gw starts on it (a first start begins at chat.db's end), then
 * RECENT_ROWS more rows dated within the last 10 minutes are written (waited for until gw holds them) and EDITED_ROWS of
 * them edited (gw's edit re-check, which looks at the rows of the last 16 minutes after every chat.db
 * change, turns each into a message.edited event: waited for on GET /events). Then SETTLE_S, then the
 * IDLE_S window with nothing written. Last, one more edit, and gw's CPU over the 3 s after it (one
 * change's cost: the new rows' read and the re-check), less its idle rate.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnGw, stopGw, waitFor, waitWhileRunning } from "../../test/helpers/process.ts";
import {
  chatDbPathIn,
  FRIEND,
  FRIEND_CHAT,
  GW_ALLOWLIST,
  gwEnvFor,
  openBenchChatDb,
  STRANGER,
  STRANGER_CHAT,
} from "../lib/chatdb.ts";
import { BARE_BUN } from "../lib/child.ts";
import { type MachineLoad, withMachineLoad } from "../lib/machine.ts";
import {
  procCpuMs,
  sampleProc,
  ThreadLedger,
  threadSamples,
  type WindowCost,
  windowCost,
} from "../lib/proc.ts";
import type { Session } from "../lib/session.ts";
import { TOKEN } from "../lib/settings.ts";
import { CHATDB_ROWS, EDITED_ROWS, IDLE_S, progress, RECENT_ROWS, SETTLE_S } from "./settings.ts";

const MIN = 60_000;
const DAY = 24 * 60 * MIN;

export interface IdleResult {
  chatDbRows: number;
  chatDbMiB: number;
  fillMs: number;
  /** Edit events gw stored from the re-check before the window (wanted: EDITED_ROWS). */
  editEvents: number;
  gw: WindowCost;
  bare: WindowCost;
  machine: MachineLoad;
  /** One edit after the window: gw's CPU over the 3 s after it, less 3 s at its idle rate, ms. */
  oneChangeMs: number;
  oneChangeSeen: boolean;
}

/** Rows from the friend, every tenth from a stranger; `dateMs` as Messages dates them. */
function fill(writer: ReturnType<typeof openBenchChatDb>, n: number, dateMs: (i: number) => number) {
  const rowids: number[] = [];
  writer.db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const stranger = i % 10 === 9;
      const { rowid } = writer.message({
        chatGuid: stranger ? STRANGER_CHAT : FRIEND_CHAT,
        from: stranger ? STRANGER : FRIEND,
        text: `row ${i} ${stranger ? "from a stranger" : "from the friend"}`,
        dateMs: dateMs(i),
      });
      if (!stranger) rowids.push(rowid);
    }
  })();
  return rowids;
}

/** How many of the friend's messages gw holds unread for this agent (GET /channels' unread_count). */
async function friendUnread(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/channels`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "bench-events-idle" },
  });
  const body = (await res.json()) as { channels: { channel_id: string; unread_count: number }[] };
  return body.channels.find((c) => c.channel_id === FRIEND)?.unread_count ?? 0;
}

async function editEvents(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/events?limit=100`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "bench-events-idle" },
  });
  const body = (await res.json()) as { events: { kind: string }[] };
  return body.events.filter((e) => e.kind === "message.edited").length;
}

/** Observes both processes' threads every 500 ms for `ms`. */
async function watch(ledgers: readonly ThreadLedger[], ms: number): Promise<void> {
  const end = performance.now() + ms;
  for (;;) {
    const left = end - performance.now();
    if (left <= 0) return;
    await Bun.sleep(Math.min(500, left));
    for (const l of ledgers) l.observe(threadSamples(l.pid));
  }
}

export async function measureIdle(session: Session): Promise<IdleResult> {
  if (CHATDB_ROWS < RECENT_ROWS * 2)
    throw new Error(`BENCH_CHATDB_ROWS must be 0 or at least ${RECENT_ROWS * 2}`);
  const dir = session.tempDir("gw-bench-events-idle-");
  const chatDbPath = chatDbPathIn(dir);
  writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);
  const t0 = performance.now();
  const writer = openBenchChatDb(chatDbPath);
  const old = CHATDB_ROWS - RECENT_ROWS;
  const now0 = Date.now();
  fill(writer, old, (i) => now0 - 16 * MIN - 30 * DAY + Math.floor((i / old) * 30 * DAY));
  // Messages checkpoints its WAL from time to time; the old rows are in chat.db itself.
  writer.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  const fillMs = Math.round(performance.now() - t0);
  progress(`chat.db: ${old.toLocaleString("en-US")} rows in ${fillMs} ms; starting gw serve`);
  const home = join(dir, "gw");
  mkdirSync(home, { recursive: true });
  const gw = spawnGw(["serve"], {
    ...gwEnvFor(home, chatDbPath),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
  });
  session.track(gw.proc);
  const bare = Bun.spawn([process.execPath, BARE_BUN], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    stdin: "pipe",
    stdout: "ignore",
    stderr: "inherit",
  });
  session.track(bare);
  try {
    const port = Number(
      await waitWhileRunning(
        gw,
        () => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(gw.output().stderr)?.[1],
        `gw serve's "listening" line`,
        60_000,
      ),
    );
    await Bun.sleep(2_000);
    const now1 = Date.now();
    const recent = fill(
      writer,
      RECENT_ROWS,
      (i) => now1 - 10 * MIN + Math.floor((i / RECENT_ROWS) * 10 * MIN),
    );
    // Edits of messages gw holds: a row edited before gw first reads it is stored with its edited text
    // and is no edit event (the race that once left 18 of 30 edits unseen here).
    await waitWhileRunning(
      gw,
      async () => ((await friendUnread(port)) >= recent.length ? true : undefined),
      `the ${recent.length} recent rows of the friend stored`,
      60_000,
    );
    for (const rowid of recent.slice(-EDITED_ROWS)) writer.edit(rowid, `row ${rowid}, edited`);
    const edits = await waitWhileRunning(
      gw,
      async () => {
        const n = await editEvents(port);
        return n >= EDITED_ROWS ? n : undefined;
      },
      `${EDITED_ROWS} message.edited events`,
      60_000,
    ).catch(async () => editEvents(port));
    progress(
      `chat.db: ${CHATDB_ROWS.toLocaleString("en-US")} rows; gw stored ${edits} edit events from the re-check`,
    );
    const pids = [gw.proc.pid, bare.pid];
    const ledgers = pids.map((pid) => new ThreadLedger(pid, threadSamples(pid)));
    progress(
      `settling ${SETTLE_S} s, then ${IDLE_S} s idle: gw serve (${gw.proc.pid}), bare Bun (${bare.pid})`,
    );
    await watch(ledgers, SETTLE_S * 1000);
    const a = pids.map((pid) => sampleProc(pid));
    const marks = ledgers.map((l) => l.mark());
    const [, machine] = await withMachineLoad(() => watch(ledgers, IDLE_S * 1000));
    const b = pids.map((pid) => sampleProc(pid));
    const cost = pids.map((_, i) =>
      windowCost(a[i] as never, b[i] as never, ledgers[i] as ThreadLedger, marks[i] as never),
    ) as [WindowCost, WindowCost];
    progress(`idle: gw ${cost[0].cpuPct} % of a core, bare Bun ${cost[1].cpuPct} %`);
    // One more edit: what a change costs gw (its read and the re-check), less 3 s at its idle rate.
    const before = procCpuMs(gw.proc.pid)?.self ?? 0;
    const last = recent.at(-1) as number;
    writer.edit(last, `row ${last}, edited again`);
    await Bun.sleep(3_000);
    const after = procCpuMs(gw.proc.pid)?.self ?? 0;
    const oneChangeSeen = await waitFor(
      async () => ((await editEvents(port)) > edits ? true : undefined),
      "the last edit",
      10_000,
    ).catch(() => false);
    return {
      chatDbRows: (writer.db.query("SELECT COUNT(*) AS n FROM message").get() as { n: number }).n,
      chatDbMiB:
        Math.round(((Bun.file(chatDbPath).size + Bun.file(`${chatDbPath}-wal`).size) / 2 ** 20) * 10) / 10,
      fillMs,
      editEvents: edits,
      gw: cost[0],
      bare: cost[1],
      machine,
      oneChangeMs: Math.round((after - before - (cost[0].cpuMs / cost[0].wallS) * 3) * 10) / 10,
      oneChangeSeen,
    };
  } finally {
    await stopGw(gw).catch(() => undefined);
    bare.stdin.end();
    await bare.exited;
    writer.close();
  }
}
