/**
 * Benchmark: webhook delivery, stored → received at a local sink, against a raw fetch baseline.
 *
 *   bun run bench/webhooks/webhooks.ts
 *
 * 1. Starts the sink (bench/lib/sink-child.ts) in its own process: Bun.serve on 127.0.0.1 that records the
 *    arrival time of every delivery id, checks X-GW-Signature and answers 204. Its clock offset to this
 *    process is measured with pings (min-RTT sample) at the start and the end; arrival times are
 *    corrected by it (both processes use timeOrigin + performance.now(), a cross-process wall clock).
 * 2. Builds gw as `gw serve` does, in a temp directory: loadConfig over an explicit environment
 *    (GW_WEBHOOK_URL = the sink, GW_WEBHOOK_SECRET), createService with the system clock, a quiet logger
 *    and no connectors, then start(). The only difference to `gw serve` is the service's `fetch` port: a
 *    pass-through that notes when the dispatcher calls fetch for a delivery (for the breakdown).
 * 3. Latency: BENCH_SAMPLES (200) single allowed messages over 8 channels, one at a time, each followed by
 *    a BENCH_GAP_MS (20 ms) pause once its POST was answered. Latency = sink arrival − the moment
 *    svc.ingest() returned (the commit is done: the message is stored). Interleaved with it, the raw
 *    baseline: the same number of single POSTs of an equivalent signed Envelope (signedHeaders, same
 *    fetch options as the dispatcher), timed from just before signing to the sink arrival.
 * 4. Throughput: BENCH_MESSAGES (5,000) allowed messages over BENCH_CHANNELS (100) channels, ingested in
 *    batches of BENCH_BATCH (100) with a turn of the event loop between batches, timed from the first
 *    ingest call to the last sink arrival. Raw baseline: a bare loop of MAX_IN_FLIGHT (4) workers POSTing
 *    the same number of pre-built signed Envelopes (signed per request), no database, timed from its start
 *    to the last sink arrival. BENCH_ROUNDS (3) rounds in order raw, gw, raw, gw, …; the figure is the
 *    median round (the slowest is printed too). Then the delivery rows are checked (status, attempt count,
 *    last HTTP code): per gw round, and for every row the run created.
 * 5. Breakdown (BENCH_PROFILE=1, the default): one more gw throughput round, not used for the figures,
 *    with the store calls the dispatcher makes wrapped in timers (monkey-patched on svc.store at run time;
 *    src/ is untouched), to show where a delivery's time goes on the single JS thread.
 * Prints a table, then one JSON line on stdout; progress on stderr. Removes its temp dir at the end.
 *
 * Parts: settings.ts, gw.ts (2), latency.ts (3), throughput.ts (4, 5),
 * report.ts; the sink is lib/sink-child.ts through lib/sink.ts.
 *
 * Environment: BENCH_SAMPLES (200), BENCH_GAP_MS (20), BENCH_MESSAGES (5000), BENCH_CHANNELS (100),
 * BENCH_BATCH (100), BENCH_ROUNDS (3), BENCH_PROFILE (1), BENCH_KEEP (1 keeps the temp directory).
 */
import { cpus, tmpdir } from "node:os";
import { cpuJiffies } from "../lib/machine.ts";
import { startSession } from "../lib/session.ts";
import { KEEP } from "../lib/settings.ts";
import { Sink } from "../lib/sink.ts";
import { type Bench, messageKit, startGateway } from "./gw.ts";
import { latency } from "./latency.ts";
import { reportWebhooks, type WebhooksRun } from "./report.ts";
import {
  CHANNELS,
  GAP_MS,
  MESSAGES,
  PROFILE,
  progress,
  ROUNDS,
  SAMPLES,
  SECRET,
  WARMUP,
} from "./settings.ts";
import { breakdown, type ThroughputRound, throughputGw, throughputRaw } from "./throughput.ts";

/** Sink clock minus this process's clock, from the ping with the smallest round trip (40 pings). */
async function clockOffset(sink: Sink): Promise<{ offsetMs: number; rttMs: number }> {
  const { off, err } = await sink.measureOffset(40);
  return { offsetMs: off, rttMs: err * 2 };
}

/** ROUNDS throughput rounds in order raw, gw, raw, gw, … */
async function throughputRounds(b: Bench, offsetMs: number): Promise<ThroughputRound[]> {
  const rounds: ThroughputRound[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of ["raw", "gw"] as const) {
      progress(
        `throughput round ${r + 1}/${ROUNDS} ${kind}: ${MESSAGES} deliveries over ${CHANNELS} channels`,
      );
      const round =
        kind === "gw"
          ? await throughputGw(b, offsetMs, `tp${r}`)
          : await throughputRaw(b, offsetMs, `raw${r}`);
      progress(
        `  ${kind}: ${round.rate.toFixed(0)}/s (${round.wallMs.toFixed(0)} ms; sink-side ${round.sinkRate.toFixed(0)}/s) ${JSON.stringify(round.outcomes)}`,
      );
      rounds.push(round);
    }
  }
  return rounds;
}

/** Latency, the throughput rounds, the breakdown, with the sink's clock offset measured before and after. */
async function phases(
  b: Bench,
  dir: string,
  startedAt: number,
  stat0: number[] | null,
): Promise<WebhooksRun> {
  const machine = {
    nproc: navigator.hardwareConcurrency,
    cpu: cpus()[0]?.model ?? "unknown",
    bun: Bun.version,
    platform: `${process.platform}-${process.arch}`,
    tmpdir: tmpdir(),
  };
  progress(`machine: ${JSON.stringify(machine)}; sink on 127.0.0.1:${b.sink.port}; temp dir ${dir}`);
  const clock0 = await clockOffset(b.sink);
  progress(`sink clock offset ${clock0.offsetMs.toFixed(3)} ms (ping RTT ${clock0.rttMs.toFixed(3)} ms)`);
  progress(
    `latency: ${WARMUP} warm-up + ${SAMPLES} samples each, gw and raw interleaved, ${GAP_MS} ms apart`,
  );
  const lat = await latency(b, clock0.offsetMs);
  const rounds = await throughputRounds(b, clock0.offsetMs);
  if (PROFILE) progress("breakdown round (gw, store calls timed)");
  const prof = PROFILE ? await breakdown(b, clock0.offsetMs) : null;
  const clock1 = await clockOffset(b.sink);
  progress(
    `sink clock offset at the end ${clock1.offsetMs.toFixed(3)} ms (RTT ${clock1.rttMs.toFixed(3)} ms)`,
  );
  return { startedAt, stat0, machine, clock0, clock1, lat, rounds, prof };
}

const session = startSession(progress, KEEP);
const sink = await Sink.start(SECRET);
const dir = session.tempDir("gw-bench-webhooks-");
let gw: Awaited<ReturnType<typeof startGateway>> | null = null;

try {
  gw = await startGateway(dir, sink.url);
  const b: Bench = { sink, gw, kit: messageKit(gw.config, sink.url) };
  /** How much the hypervisor took (steal) over the run, for context. */
  const stat0 = cpuJiffies();
  const startedAt = performance.now();
  reportWebhooks(b, await phases(b, dir, startedAt, stat0));
} finally {
  await gw?.service.close().catch(() => {});
  await sink.stop();
  session.cleanup();
}
