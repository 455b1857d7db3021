/**
 * Benchmark: chat.db commit → an agent sees the message, for gw and for the real peers and floors
 * watching the same chat.db at the same time, each in its own process.
 *
 *   bun run bench pickup          (or: bun run bench/pickup/pickup.ts)
 *
 * This script plays Messages: it writes rows into ONE chat.db with openChatDbWriter (WAL, one
 * transaction per message) at seeded random gaps of BENCH_GAP_MIN_MS–BENCH_GAP_MAX_MS, whatever the
 * watchers do. Watchers (see WATCHERS below; each one is a process and yields one or more figures):
 * - gw (bench/pickup/gw.ts), built as `gw serve` builds it, with webhooks to bench/lib/sink-child.ts and
 *   its ingest commits stamped in gw (lib/gw-child.ts serveLikeGw's trace);
 * - gw's observers, started once gw listens (GW_OBSERVERS): the agent polling GET /messages/unread every
 *   BENCH_STEP_MS and marking read (bench/pickup/agent.ts); an agent following the unread long poll
 *   (bench/pickup/longpoll.ts); `gw mcp --channel` driven by the MCP SDK Client as Claude Code drives a
 *   channel (bench/pickup/channel.ts gw);
 * - @photon-ai/imessage-kit 3.0.0's watcher (bench/pickup/kit.ts);
 * - the Claude Code iMessage plugin, run from a local snapshot and driven by the MCP SDK Client
 *   (bench/pickup/channel.ts claude, lib/claude-plugin.ts; skipped with a line when it cannot run);
 * - the floor: a bare fs.watch on chat.db's directory (bench/pickup/raw.ts watch).
 * Phase "notify" runs the sample loop once per writer `PRAGMA synchronous` mode (BENCH_SYNC, NORMAL then
 * FULL) on the same processes: BENCH_WARMUP untimed commits, then BENCH_SAMPLES timed ones; a row not
 * seen by a figure within BENCH_STUCK_MS of its commit is stuck. Phase "poll": gw with notifications off
 * (GW_DEVICE_POLL_INTERVAL_MS = BENCH_POLL_MS) next to a bare `PRAGMA data_version` + `MAX(ROWID)` loop at
 * the same interval (bench/pickup/raw.ts poll); BENCH_POLL_SAMPLES commits, each after the previous one
 * was listed, at golden-ratio phases of the interval.
 *
 * Latency = sighting − commit, where commit is the instant writer.message() returned (COMMIT done) and a
 * child's stamp (timeOrigin + performance.now()) is corrected by its clock offset, measured with 25 pings
 * (lib/child.ts; the sink over HTTP, lib/sink.ts). Method, setup of each peer and figures:
 * bench/pickup/results.md. Parts: settings.ts, watchers.ts and peers.ts (the watchers),
 * phases.ts, match.ts (sightings to commits), report.ts. Prints tables, the verdicts and the report JSON line (lib/report.ts) on stdout,
 * progress on stderr. Environment: BENCH_SAMPLES (200), BENCH_WARMUP (10), BENCH_GAP_MIN_MS (50),
 * BENCH_GAP_MAX_MS (400), BENCH_STEP_MS (1), BENCH_STUCK_MS (5000), BENCH_SYNC (NORMAL,FULL),
 * BENCH_PHASES (notify,poll), BENCH_POLL_MS (1000), BENCH_POLL_SAMPLES (120), BENCH_SEED (1),
 * BENCH_KEEP (0), BENCH_CLAUDE_PLUGIN_GIT (the snapshot's bare git dir).
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { chatDbPathIn, GW_ALLOWLIST, openBenchChatDb } from "../lib/chatdb.ts";
import { startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { type ModeResult, notifyPhase, type PollResult, pollPhase, type Stage } from "./phases.ts";
import { reportPickup } from "./report.ts";
import { PHASES, progress } from "./settings.ts";

const startedAt = performance.now();
const session = startSession(progress, KEEP);
/** HOME of every watcher; chat.db sits where Messages keeps it. */
const dir = session.tempDir("gw-bench-pickup-");
const chatDbPath = chatDbPathIn(dir);
writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);
const stage: Stage = {
  dir,
  chatDbPath,
  session,
  writer: openBenchChatDb(chatDbPath),
  nonce: crypto.randomUUID().slice(0, 8),
  watcherInfo: {},
  skipped: {},
};

progress(`work dir ${dir}`);
const load1 = loadavg()[0] ?? 0;
if (load1 > 0.5)
  progress(`warning: 1-min load average is ${load1.toFixed(2)}: other work shares these cores`);
let modes: ModeResult[] = [];
let poll: PollResult | null = null;
try {
  if (PHASES.has("notify")) modes = await notifyPhase(stage);
  if (PHASES.has("poll")) poll = await pollPhase(stage);
} finally {
  stage.writer.close();
  session.cleanup();
}
reportPickup(startedAt, modes, poll, { watchers: stage.watcherInfo, skipped: stage.skipped });
