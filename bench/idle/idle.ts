/**
 * Benchmark: what gw costs while nothing happens, next to the peers and a bare Bun process in the same
 * run, where that time goes, and whether its file-change notifications still work afterwards.
 *
 *   bun run bench idle            (or: bun run bench/idle/idle.ts; BENCH_IDLE_S=600 for the 10-minute check)
 *
 * Processes, side by side, each its own, all on one chat.db: a writer holding chat.db open
 * (lib/messages-child.ts: WAL and shm exist, nothing is committed during the window); gw as
 * `bun src/main.ts serve` (the real command, default settings: notifications on, 1000 ms timer, no
 * webhooks); with BENCH_IDLE_WEBHOOKS=1 (default) a second `gw serve` with GW_WEBHOOK_URL to
 * bench/lib/sink-child.ts; with BENCH_IDLE_WHATIF=1 (default) two more `gw serve` that tell where gw's time
 * goes without changing src: one with GW_DEVICE_POLL_INTERVAL_MS=60000 (notifications on, the safety
 * timer out of the way) and one without the iMessage connector (GW_CHAT_DB_PATH unset); imessage-kit's
 * watcher (bench/pickup/kit.ts); the Claude Code iMessage plugin (bench/pickup/channel.ts claude starts it; its
 * server process is the one measured; skipped with a line when it cannot run); a bare Bun process of the
 * same runtime with nothing started (lib/bare-bun.ts). Each gw gets one GET /messages/unread before
 * the settle period, as a polling agent would have made.
 *
 * Everything is read from /proc, nothing is asked of the processes (lib/proc.ts): every thread's
 * schedstat every 500 ms from the start of the settle period (BENCH_IDLE_SETTLE_S), and stat, RSS and a
 * mark every BENCH_IDLE_SAMPLE_S. Over the window (BENCH_IDLE_S): CPU % of one core, summed over all
 * threads (threads that come and go included; utime + stime shown as a cross-check), per thread, per
 * interval; RSS at start, end, max and its least-squares slope. Then strace follows every gw and the
 * bare process for BENCH_IDLE_STRACE_S (0 skips; lib/strace.ts) for the event loop's wake-ups by source.
 * Last, the writer commits BENCH_IDLE_PICKUPS messages 300 ms apart and each watcher's pick-up is timed
 * (gw: GET /messages/unread polled every 1 ms by this script). Method and findings: bench/pickup/results.md.
 * Prints tables, verdicts and the report JSON line. Environment: BENCH_IDLE_S (60), BENCH_IDLE_SETTLE_S
 * (30), BENCH_IDLE_SAMPLE_S (10), BENCH_IDLE_STRACE_S (20), BENCH_IDLE_PICKUPS (3), BENCH_IDLE_WEBHOOKS
 * (1), BENCH_IDLE_WHATIF (1), BENCH_KEEP (0), BENCH_CLAUDE_PLUGIN_GIT. Parts: settings.ts, procs.ts,
 * window.ts, checks.ts (strace, pick-ups), report.ts; children lib/messages-child.ts, lib/bare-bun.ts.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { chatDbPathIn, GW_ALLOWLIST } from "../lib/chatdb.ts";
import type { Child } from "../lib/child.ts";
import { startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { pickupsAfter, traceIdle } from "./checks.ts";
import { type Scene, type Started, startAll } from "./procs.ts";
import { type IdleRun, reportIdle } from "./report.ts";
import { progress } from "./settings.ts";
import { idleWindow } from "./window.ts";

const startedAt = performance.now();
const session = startSession(progress, KEEP);
const dir = session.tempDir("gw-bench-idle-");
const scene: Scene = { session, dir, chatDbPath: chatDbPathIn(dir) };
writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);

progress(`work dir ${dir}`);
const load1 = loadavg()[0] ?? 0;
if (load1 > 0.5)
  progress(`warning: 1-min load average is ${load1.toFixed(2)}: other work shares these cores`);
const started: Started = { measured: [], writer: null, sink: null, skipped: {} };
let run: IdleRun;
try {
  await startAll(scene, started);
  const { procs, machine } = await idleWindow(started.measured);
  const traces = await traceIdle(scene, started.measured);
  const pickups = await pickupsAfter(started.writer as Child, started.measured);
  run = { procs, machine, traces, pickups, skipped: started.skipped };
} finally {
  for (const m of started.measured) await m.stop().catch(() => undefined);
  await started.sink?.stop().catch(() => undefined);
  await started.writer?.stop().catch(() => undefined);
  session.cleanup();
}
reportIdle(startedAt, run);
