/**
 * Benchmark: "Load held" (reliability.md §8.1, issue "evidence" item 4): BENCH_DURATION_S of mixed load
 * against one gw, with both connectors and webhooks on, and the invariants checked afterwards.
 *
 *   bun run bench load          (or: bun run bench/load/load.ts)
 *
 * Processes (none shares another's event loop but the fake Discord, which this script hosts as
 * bench/discord/discord.ts does):
 * - gw (bench/load/gw.ts), built as `gw serve` builds it: the iMessage connector on a chat.db with
 *   file-change notifications, iMessage sends through the Messages stand-in (src/demo/messages-standin.ts
 *   run by a GW_OSASCRIPT_PATH script, one process per send, as test/helpers/device.ts does), the
 *   Discord connector logged in to the fake Discord (src/demo/fake-discord), webhooks to the sink;
 * - Messages (bench/lib/messages-child.ts) writing chat.db;
 * - the webhook sink (bench/lib/sink-child.ts, lib/sink.ts);
 * - the load generator (bench/load/agents.ts): BENCH_AGENTS agents, each repeating "unread page →
 *   context around one message of it → mark the page read" every period (BENCH_API_RPS requests/s in
 *   all when every page is full), and BENCH_SEND_RPS sends spread evenly over the BENCH_CHANNELS
 *   channels (half iMessage, half Discord), every one with its own Idempotency-Key, kept under the
 *   per-channel rate limit set here (a 429 counts as an error);
 * - this script: the fake Discord, Discord inbound (MESSAGE_CREATE), the sampler (gw's RSS and the
 *   WAL's size every second) and the audit.
 * Inbound: BENCH_INBOUND_RPS messages/s in all, half as chat.db rows, half as MESSAGE_CREATEs; on each
 * platform every other message is from an allowlisted sender, so its webhook fires.
 *
 * Before the load, gw.db is seeded with BENCH_HISTORY messages of the same channels through
 * createIngest (the normal write path, webhooks off), so pages are full and context has neighbours.
 * Agents alternate between two read states: even ones have read nothing (they work through the
 * history, full pages), odd ones have read all of it (they follow the live messages, short pages).
 * Then one message per channel primes every channel end to end (stored and delivered) before t0.
 *
 * After the load: wait (≤ BENCH_DRAIN_S) until every inbound message is stored, every webhook delivered
 * and none pending; then the audit, from gw's own connection (gw.ts `audit`), the sink's records,
 * the fake's posts, chat.db's own rows and the stand-in's call log: every inbound message stored
 * exactly once with the right allowlist status; one delivery per allowed message, received once,
 * signature valid; every accepted send stored once and posted exactly once on its platform.
 *
 * Environment: BENCH_DURATION_S (60), BENCH_AGENTS (20), BENCH_CHANNELS (50), BENCH_INBOUND_RPS (50),
 * BENCH_SEED (1), BENCH_API_RPS (600: the agents' planned request rate), BENCH_SEND_RPS (10),
 * BENCH_WARMUP_S (10: RSS growth is measured after it), BENCH_HISTORY (sized so the backlog agents
 * cannot run out), BENCH_DRAIN_S (30), BENCH_QUIET_WAIT_S (60: wait for the machine to be under 10%
 * busy first), BENCH_MAX_OTHER_PCT (15) and BENCH_ATTEMPTS (3: the whole run is repeated while other
 * processes used more than that share of the CPUs during the load; the quietest attempt is reported),
 * BENCH_KEEP (0). Method: bench/README.md. Parts: settings.ts, world.ts, history.ts,
 * run.ts (processes, prime, timed load, drain), audit.ts, figures.ts, report.ts; the
 * children are gw.ts, agents.ts and lib/messages-child.ts.
 */
import type { FakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { report } from "../lib/report.ts";
import { startSession } from "../lib/session.ts";
import { KEEP, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";
import { auditInbound, auditSends, auditWebhooks, type GwAudit } from "./audit.ts";
import { figures } from "./figures.ts";
import { type AttemptReport, attemptReport } from "./report.ts";
import { drain, primeChannels, startAttempt, timedLoad } from "./run.ts";
import { ATTEMPTS, MAX_OTHER_PCT, progress } from "./settings.ts";

const startedAt = performance.now();
const session = startSession(progress, KEEP);
const fakes = new Set<FakeDiscord>();
process.on("exit", () => {
  for (const f of fakes) void f.stop();
});

type Attempt = AttemptReport;

/** One whole run: fresh directory, processes and fake; prime, load, drain, audit, stop, figures. */
async function attempt(): Promise<Attempt> {
  const random = mulberry32(SEED);
  const a = await startAttempt(session, fakes, random);
  const prime = await primeChannels(a);
  const t = await timedLoad(a, random);
  const inbound = [...prime, ...t.imPlan, ...t.dcPlan];
  const allowedInbound = inbound.filter((m) => m.from.allowed);
  const drained = await drain(a, inbound, allowedInbound.length, t.tEnd);
  const audit = (await a.gw.request({ cmd: "audit" }, 60_000)) as unknown as GwAudit;
  const arrivals = await a.sink.arrivals();
  const inboundAudit = auditInbound(audit, inbound);
  const webhookAudit = auditWebhooks(audit, arrivals, allowedInbound);
  const sends = auditSends(a, audit, t.load);
  const health = (await a.gw.request({ cmd: "health" })).connectors;
  await a.agents.stop();
  await a.writer.stop();
  await a.gw.stop();
  await a.sink.stop();
  fakes.delete(a.fake);
  await a.fake.stop();
  const outcome = {
    seeded: a.seeded,
    t,
    prime,
    inbound,
    allowedInbound,
    drained,
    audit,
    arrivals,
    inboundAudit,
    webhookAudit,
    sends,
    health,
  };
  return attemptReport(outcome, figures(t));
}

/**
 * Runs the whole benchmark (fresh directory, processes and fake) up to ATTEMPTS times while other
 * processes used more than MAX_OTHER_PCT of the CPUs during the load, and reports the quietest attempt.
 */
async function main() {
  const tried: Attempt[] = [];
  for (let n = 1; n <= ATTEMPTS; n++) {
    const a = await attempt();
    tried.push(a);
    if (a.otherPct === null || a.otherPct <= MAX_OTHER_PCT) break;
    if (n < ATTEMPTS)
      progress(
        `other processes used ${a.otherPct}% of the CPUs during the load (over ${MAX_OTHER_PCT}%): again`,
      );
  }
  const best = tried.reduce((x, y) => ((y.otherPct ?? 0) < (x.otherPct ?? 0) ? y : x));
  const attempts = tried.map((a) => ({
    otherPct: a.otherPct,
    verdicts: a.summary
      .filter((r) => r.pass !== null)
      .map((r) => `${r.pass ? "met" : "missed"}: ${r.figure}`),
  }));
  report({
    bench: "load",
    command: "bun run bench load",
    startedAt,
    summary: best.summary,
    lines: [
      ...best.lines,
      ...(tried.length > 1
        ? [
            `attempts: ${tried.length}, other processes' share ${tried.map((a) => `${a.otherPct}%`).join(", ")}; reported: the quietest`,
          ]
        : []),
    ],
    results: { ...best.results, attempts },
  });
}

try {
  await main();
} finally {
  session.cleanup();
}
process.exit(0);
