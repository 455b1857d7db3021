/**
 * Benchmark: gw's Discord connector end to end against the fake Discord of the tests (real gateway and
 * REST protocols over loopback, src/demo/fake-discord), each figure next to a raw discord.js baseline
 * measured in the same run.
 *
 *   bun run bench/discord/discord.ts
 *
 * Processes: this script hosts the fake Discord and plays the agent (it polls GET /messages/unread). gw
 * runs in its own process (bench/discord/gw.ts, built as `gw serve` builds it: listen, then start the
 * connectors), the raw discord.js client in another (bench/discord/raw.ts), the webhook sink in a third
 * (bench/lib/sink-child.ts), so no two share an event loop.
 *
 * 1. latency: gw and the raw client are logged in to the same fake as the same bot. The fake gives each
 *    IDENTIFY its own session and sends every dispatch to every session, starting with a different one
 *    each time (gateway.ts), as Discord does for two running instances of one bot; so both receive the
 *    same MESSAGE_CREATE frames and neither is systematically first. Per sample: stamp, post one message
 *    from the allowlisted user (MESSAGE_CREATE), GET /messages/unread every BENCH_STEP_MS until it is
 *    listed, mark it read, wait 20–120 ms (seeded). Measured from the stamp: the raw client's
 *    MESSAGE_CREATE dispatch on client.ws and its `messageCreate` event (the baseline); inside gw, the
 *    same dispatch and the ingest commit; the unread response that lists it; the signed webhook's
 *    arrival at the sink. BENCH_SAMPLES samples after BENCH_WARMUP untimed ones.
 * 2. catchup: a fresh gw sees one live message in each of BENCH_CHANNELS channels and stops (close());
 *    BENCH_PER_CHANNEL messages per channel are posted into history only; then BENCH_CATCHUP_RUNS
 *    rounds, each running, in alternating order, gw started again on its own copy of the stopped
 *    state (timed until all messages are stored) and the raw baseline in a fresh process (discord.js
 *    login, then client.rest paging the same channels after the same ids, 5 channels at a time as gw,
 *    each page inserted in one transaction into a bun:sqlite table created from gw's own DDL). Finally
 *    both again, alternating, with discord.js's 50 requests/s pacing lifted (the floor a fake allows;
 *    for gw through discord.js's DefaultRestOptions in the child, no src change).
 *
 * Clocks: every process stamps `performance.timeOrigin + performance.now()`; each child's offset is
 * measured with 25 pings (smallest round trip) and subtracted; the fake's request log (Date.now(), 1 ms)
 * is mapped onto the same clock. Prints a table and one JSON line on stdout, progress on stderr.
 * Environment: BENCH_SAMPLES (500), BENCH_WARMUP (20), BENCH_STEP_MS (1), BENCH_SEED (1), BENCH_CHANNELS
 * (50), BENCH_PER_CHANNEL (200), BENCH_CATCHUP_RUNS (3), BENCH_PHASES (latency,catchup), BENCH_KEEP (0),
 * BENCH_RAW_STORE (0; 1: the raw client also commits each message as one row into a bun:sqlite table
 * with gw's DDL and pragmas, right after its event: the floor of "event -> stored").
 * Write-up: bench/discord/results.md. Parts: settings.ts, procs.ts, latency.ts (1),
 * catchup.ts (2), report.ts; the children are gw.ts and raw.ts.
 */
import { now } from "../lib/child-protocol.ts";
import { machine as machineInfo, type SummaryRow } from "../lib/report.ts";
import { startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { catchupPhase } from "./catchup.ts";
import { latencyPhase } from "./latency.ts";
import type { DiscordRun } from "./procs.ts";
import { type DiscordResults, reportDiscord } from "./report.ts";
import { PHASES, progress } from "./settings.ts";

const session = startSession(progress, KEEP);
const run: DiscordRun = { root: session.tempDir("gw-bench-discord-"), fakes: new Set() };

const machine = { ...machineInfo(), load1AtStart: machineInfo().load1 };
progress(
  `work dir ${run.root}; ${machine.cpus} cpus (${machine.cpuModel}), bun ${machine.bun}, load ${machine.load1AtStart}`,
);
const tMain = now();
const startedAt = performance.now();
const results: DiscordResults = {};
const verdicts: SummaryRow[] = [];
try {
  if (PHASES.has("latency")) {
    const { result, verdicts: v } = await latencyPhase(run);
    results.latency = result;
    verdicts.push(...v);
  }
  if (PHASES.has("catchup")) {
    const { result, verdicts: v } = await catchupPhase(run);
    results.catchup = result;
    verdicts.push(...v);
  }
} finally {
  for (const f of run.fakes) void f.stop();
  session.cleanup();
}
reportDiscord(startedAt, machine, Math.round((now() - tMain) / 100) / 10, results, verdicts);
