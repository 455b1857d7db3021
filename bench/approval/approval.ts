/**
 * Benchmark: phone approval (extensions.md §3), the two hops gw adds between Claude Code and the owner's
 * phone, each next to the floor it rides on, measured in the same run.
 *
 *   bun run bench approval          (or: bun run bench/approval/approval.ts)
 *
 * World (world.ts, as test/e2e/phone-approval.test.ts builds it): the fake Discord in this
 * process, a chat.db written as Messages writes it, `gw serve` as its own process (iMessage sends through
 * the Messages stand-in, one process per send; the per-channel send limit lifted, see RATE_LIMIT_ENV), and
 * `gw mcp --channel` with GW_MCP_OWNER under the official MCP SDK Client in this process (Claude Code).
 * Every instant is performance.now() in this process: t0 before the client writes the request, the fake's
 * onPost hook, the chat.db watcher's sighting of the stand-in's committed row (fs.watch + a 1 ms timer,
 * sightings.ts), the commit or dispatch of the owner's answer, the notification's arrival.
 *
 * Per sample (measure.ts): prompt relayed (permission_request → posted on Discord, committed into
 * chat.db) and its floor, a direct POST /messages/send of the same text to both chats; the owner's answer
 * (alternately Discord and iMessage, yes and no) → the `permission` verdict, and its floor, an ordinary
 * message → its channel push. BENCH_WARMUP untimed samples, a wait for a quiet machine, then
 * BENCH_APPROVAL_N timed ones. Percentiles: lib/stats.ts (nearest rank). Parts: settings.ts,
 * world.ts, sightings.ts, measure.ts, report.ts.
 *
 * Environment: BENCH_APPROVAL_N (200), BENCH_WARMUP (4), BENCH_GAP_MIN_MS (100), BENCH_GAP_MAX_MS (250),
 * BENCH_STUCK_MS (10000), BENCH_QUIET_S (60), BENCH_SEED (1), BENCH_KEEP (0). Tables and the report JSON
 * line on stdout (lib/report.ts), progress on stderr.
 */

import { type MachineLoad, waitQuiet, withMachineLoad } from "../lib/machine.ts";
import { startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { runSamples, type Samples } from "./measure.ts";
import { reportApproval } from "./report.ts";
import { N, progress, QUIET_S, WARMUP } from "./settings.ts";
import { serveWarnings, startWorld } from "./world.ts";

const startedAt = performance.now();
const session = startSession(progress, KEEP);
const world = await startWorld(session).catch((err) => {
  session.cleanup();
  throw err;
});
let samples: Samples;
let machine: MachineLoad;
let quietWaitS = 0;
let timedS = 0;
let warnings: string[] = [];
let mcpStderr = "";
try {
  if (WARMUP > 0) await runSamples(world, 0, WARMUP);
  quietWaitS = await waitQuiet(QUIET_S, progress);
  const t = performance.now();
  [samples, machine] = await withMachineLoad(() => runSamples(world, WARMUP, N));
  timedS = Math.round((performance.now() - t) / 100) / 10;
} finally {
  warnings = serveWarnings(world);
  mcpStderr = world.mcp.stderr();
  await world.close().catch((err) => progress(`stopping the world: ${err}`));
  session.cleanup();
}
if (mcpStderr.trim() !== "") progress(`gw mcp stderr (warn and up):\n${mcpStderr}`);
reportApproval(samples, {
  startedAt,
  quietWaitS,
  machine,
  timedS,
  watch: world.watcher.stats,
  serveWarnings: warnings,
  mcpStderr,
});
