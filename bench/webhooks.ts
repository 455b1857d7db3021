/**
 * Benchmark: webhook delivery, stored → received at a local sink, against a raw fetch baseline.
 *
 *   bun run bench/webhooks.ts
 *
 * 1. Starts the sink (bench/webhooks-sink.ts) in its own process: Bun.serve on 127.0.0.1 that records the
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
 * Environment: BENCH_SAMPLES (200), BENCH_GAP_MS (20), BENCH_MESSAGES (5000), BENCH_CHANNELS (100),
 * BENCH_BATCH (100), BENCH_ROUNDS (3), BENCH_PROFILE (1), BENCH_KEEP (1 keeps the temp directory).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { formatProblems, loadConfig } from "../src/config/load.ts";
import type { Source } from "../src/core/envelope.ts";
import { createIdFactory } from "../src/core/ids.ts";
import { type Logger, systemClock } from "../src/core/ports.ts";
import type { NormalizedMessage } from "../src/ingest/ingest.ts";
import { createService, publicBaseUrl } from "../src/service.ts";
import { toEnvelope } from "../src/store/envelope.ts";
import type { MessageRow } from "../src/store/messages.ts";
import { MAX_IN_FLIGHT } from "../src/webhooks/dispatcher.ts";
import { signedHeaders } from "../src/webhooks/sign.ts";
import { isolatedEnv, waitFor } from "../test/helpers/process.ts";
import { now } from "./lib/child-protocol.ts";
import { cpuJiffies, stealShare } from "./lib/machine.ts";
import { report } from "./lib/report.ts";
import { Sink } from "./lib/sink.ts";
import { type Dist, dist as distOf, intEnv, median } from "./lib/stats.ts";
import { allowlistToml, silentLogger } from "./lib/world.ts";

// ---------------------------------------------------------------------------------------------------
// Configuration

const SAMPLES = intEnv("BENCH_SAMPLES", 200, 10);
const GAP_MS = intEnv("BENCH_GAP_MS", 20, 0);
const MESSAGES = intEnv("BENCH_MESSAGES", 5000, 100);
const CHANNELS = intEnv("BENCH_CHANNELS", 100, 1);
const BATCH = intEnv("BENCH_BATCH", 100, 1);
const ROUNDS = intEnv("BENCH_ROUNDS", 3, 1);
const PROFILE = intEnv("BENCH_PROFILE", 1, 0) === 1;
const KEEP = intEnv("BENCH_KEEP", 0, 0) === 1;

const TARGET_P50_MS = 20;
const TARGET_RATE = 500;
const CONCURRENCY = MAX_IN_FLIGHT;
const LATENCY_CHANNELS = 8;
const WARMUP = 20;
const TIMEOUT_MS = 15_000;
const SOURCE: Source = "device_messenger";
const SECRET = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;

const progress = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);

// ---------------------------------------------------------------------------------------------------
// Statistics

/** Unrounded: the report rounds what it shows. */
const dist = (values: readonly number[]): Dist => distOf(values, (x) => x);

const r2 = (x: number) => Math.round(x * 100) / 100;
const r1 = (x: number) => Math.round(x * 10) / 10;

// ---------------------------------------------------------------------------------------------------
// The sink (child process)

const sink = await Sink.start(SECRET);
const WEBHOOK_URL = sink.url;
const ownCpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** Sink clock minus this process's clock, from the ping with the smallest round trip. */
async function clockOffset(pings = 40): Promise<{ offsetMs: number; rttMs: number }> {
  const { off, err } = await sink.measureOffset(pings);
  return { offsetMs: off, rttMs: err * 2 };
}

// ---------------------------------------------------------------------------------------------------
// The gateway, built as `gw serve` builds it

const dir = mkdtempSync(join(tmpdir(), "gw-bench-webhooks-"));
let svc: ReturnType<typeof createService> | null = null;
let cleaned = false;
async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  try {
    await svc?.close();
  } catch {}
  await sink.stop();
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
  else progress(`kept ${dir}`);
}
process.on("SIGINT", () => {
  void cleanup().then(() => process.exit(130));
});

const SENDERS = Array.from({ length: 4 }, (_, i) => ({
  id: `+1555010${String(i).padStart(4, "0")}`,
  person: `person-${i}`,
  name: `Friend ${i}`,
}));
writeFileSync(
  join(dir, "allowlist.toml"),
  allowlistToml(
    SENDERS.flatMap((s, i) => [
      { source: SOURCE, id: s.id, person_id: s.person, display_name: s.name },
      // the same person on the other source, so gw logs no single-use person_id warning
      {
        source: "community_chat" as const,
        id: String(900_000_000_000_000_000n + BigInt(i)),
        person_id: s.person,
        display_name: null,
      },
    ]),
  ),
);

const env = isolatedEnv(dir, {
  GW_BEARER_TOKEN: `bench-${crypto.randomUUID()}`,
  GW_BIND_HOST: "127.0.0.1",
  GW_CHAT_DB_PATH: join(dir, "chat.db"),
  GW_WEBHOOK_URL: WEBHOOK_URL,
  GW_WEBHOOK_SECRET: SECRET,
});
const host = { platform: process.platform, homeDir: dir, cwd: dir };
const loaded = loadConfig(env, host);
if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
const config = loaded.config;

let warnings = 0;
const log: Logger = {
  debug() {},
  info() {},
  warn: (obj, msg) => {
    warnings += 1;
    if (warnings <= 5) progress(`gw warn: ${msg ?? ""} ${JSON.stringify(obj)}`);
  },
  error: (obj, msg) => {
    warnings += 1;
    if (warnings <= 5) progress(`gw error: ${msg ?? ""} ${JSON.stringify(obj)}`);
  },
  child: () => silentLogger,
};

/** When the dispatcher called fetch for a delivery id, and a waiter for its response. */
const fetchCalledAt = new Map<string, number>();
const answered = new Map<string, () => void>();
const passThroughFetch = ((input: string | URL | Request, init?: RequestInit) => {
  const id = (init?.headers as Record<string, string> | undefined)?.["x-gw-delivery-id"];
  if (id) fetchCalledAt.set(id, now());
  const p = fetch(input, init);
  if (id) {
    const done = answered.get(id);
    if (done) p.finally(done).catch(() => {});
  }
  return p;
}) as unknown as typeof fetch;

svc = createService({
  config,
  clock: systemClock,
  log,
  host,
  connectors: () => ({}),
  fetch: passThroughFetch,
});
await svc.start();
const service = svc;
if (!service.dispatcher) throw new Error("the dispatcher was not built: GW_WEBHOOK_URL/SECRET not taken");

// ---------------------------------------------------------------------------------------------------
// Messages and the equivalent raw bodies

const TEXTS = [
  "running late, be there in 10",
  "can you send me the file from yesterday's meeting? the one with the budget numbers",
  "ok sounds good",
  "where are we meeting tonight? I thought the place on 5th but not sure anymore",
];
let seq = 0;
/** `k` picks the text, so the gateway and the raw baseline send the same mix of body sizes. */
function message(channel: number, tag: string, k: number): NormalizedMessage {
  seq += 1;
  const sender = SENDERS[seq % SENDERS.length] as (typeof SENDERS)[number];
  const id = `chat${900_000 + channel}`;
  return {
    source: SOURCE,
    platformId: `bench-${tag}-${seq}-${crypto.randomUUID()}`,
    channel: { id, type: "group", platformRef: `iMessage;+;${id}` },
    sender: { id: sender.id, displayName: sender.id },
    text: `${TEXTS[k % TEXTS.length]} #${seq}`,
    replyToPlatformId: null,
    timestampMs: Date.now(),
    attachments: [],
    raw: { ROWID: seq, guid: `${crypto.randomUUID()}`.toUpperCase(), service: "iMessage" },
    direction: "inbound",
  };
}

/** The Envelope JSON the dispatcher would send for this message, built in memory (no database). */
const rawIds = createIdFactory(systemClock);
const baseUrl = publicBaseUrl(config.bindHost, config.bindPort);
function rawBody(m: NormalizedMessage): string {
  const sender = SENDERS.find((s) => s.id === m.sender.id);
  const row: MessageRow = {
    id: rawIds.message(),
    source: m.source,
    platform_id: m.platformId,
    channel_id: m.channel.id,
    channel_type: m.channel.type,
    sender_id: m.sender.id,
    sender_name: sender?.name ?? m.sender.displayName,
    person_id: sender?.person ?? null,
    text: m.text,
    reply_to: null,
    message_ts: m.timestampMs,
    direction: m.direction,
    allowlist_status: "allowed",
    raw: JSON.stringify(m.raw),
    created_at: Date.now(),
  };
  return JSON.stringify(toEnvelope(row, [], baseUrl));
}

/** One raw POST, exactly as the dispatcher's post(): signed per request, same fetch options. */
async function rawPost(id: string, body: string): Promise<number> {
  const headers = signedHeaders(SECRET, id, Math.floor(Date.now() / 1000), body);
  const res = await fetch(WEBHOOK_URL, {
    method: "POST",
    headers: { ...headers },
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  await res.body?.cancel();
  return res.status;
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Polls `probe` every 5 ms (the dispatcher shares this event loop) until it holds. */
const waitUntil = (probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000) =>
  waitFor(async () => ((await probe()) ? true : undefined), what, timeoutMs, 5);

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

// ---------------------------------------------------------------------------------------------------
// Latency

interface LatencyResult {
  gwFromStored: Dist;
  gwFromCall: Dist;
  gwIngest: Dist;
  gwStoredToFetch: Dist;
  gwFetchToArrival: Dist;
  raw: Dist;
  gwBytes: number;
  rawBytes: number;
}

async function latency(offsetMs: number): Promise<LatencyResult> {
  await sink.reset();
  const gw: { id: string; tCall: number; tStored: number; measured: boolean }[] = [];
  const raw: { id: string; tStart: number; measured: boolean }[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const measured = i >= WARMUP;
    // gateway: one message, stored by ingest, then pushed by the dispatcher
    const m = message(i % LATENCY_CHANNELS, "lat", i);
    const tCall = now();
    const out = service.ingest({ source: SOURCE, messages: [m], cursor: null });
    const tStored = now();
    const o = out[0];
    if (o?.status !== "stored" || !o.deliveryId)
      throw new Error(`ingest did not queue a delivery: ${o?.status}`);
    const id = o.deliveryId;
    // The dispatcher claims the row in a microtask after this synchronous code: the waiter is in place.
    const answer = new Promise<void>((resolve) => answered.set(id, resolve));
    gw.push({ id, tCall, tStored, measured });
    await withTimeout(answer, TIMEOUT_MS, `delivery ${id}`);
    answered.delete(id);
    await Bun.sleep(GAP_MS);

    // raw baseline: the same kind of body, signed and POSTed directly
    const body = rawBody(message(i % LATENCY_CHANNELS, "lat-raw", i));
    const rid = crypto.randomUUID();
    const tStart = now();
    const status = await rawPost(rid, body);
    if (status !== 204) throw new Error(`raw POST answered ${status}`);
    raw.push({ id: rid, tStart, measured });
    await Bun.sleep(GAP_MS);
  }
  await waitUntil(
    async () => (await sink.count()).n >= 2 * (WARMUP + SAMPLES),
    "the sink to see every latency sample",
    10_000,
  );
  const stats = await sink.stats();
  const arrival = new Map(stats.records.map(([id, t, bytes]) => [id, { t: t - offsetMs, bytes }]));
  const at = (id: string) => {
    const a = arrival.get(id);
    if (!a) throw new Error(`the sink has no record of ${id}`);
    return a;
  };
  const g = gw.filter((s) => s.measured);
  const r = raw.filter((s) => s.measured);
  return {
    gwFromStored: dist(g.map((s) => at(s.id).t - s.tStored)),
    gwFromCall: dist(g.map((s) => at(s.id).t - s.tCall)),
    gwIngest: dist(g.map((s) => s.tStored - s.tCall)),
    gwStoredToFetch: dist(g.map((s) => (fetchCalledAt.get(s.id) ?? Number.NaN) - s.tStored)),
    gwFetchToArrival: dist(g.map((s) => at(s.id).t - (fetchCalledAt.get(s.id) ?? Number.NaN))),
    raw: dist(r.map((s) => at(s.id).t - s.tStart)),
    gwBytes: dist(g.map((s) => at(s.id).bytes)).mean,
    rawBytes: dist(r.map((s) => at(s.id).bytes)).mean,
  };
}

// ---------------------------------------------------------------------------------------------------
// Throughput

interface ThroughputRound {
  kind: "gw" | "raw";
  n: number;
  /** From the first ingest call (gw) or the loop start (raw) to the last sink arrival. */
  wallMs: number;
  rate: number;
  /** Sink side only: (n − 1) / (last arrival − first arrival). */
  sinkRate: number;
  /** gw: how long the ingest calls took in all (the dispatcher runs between batches). */
  ingestMs: number;
  cpuUsPerDelivery: number;
  sinkCpuUsPerDelivery: number;
  dupes: number;
  bad: number;
  /** gw: "delivered/1/204" → count (status/attempts/last code of the rows); raw: "204" → count. */
  outcomes: Record<string, number>;
}

function buildBatches(tag: string): NormalizedMessage[][] {
  const batches: NormalizedMessage[][] = [];
  for (let b = 0; b < MESSAGES; b += BATCH) {
    const size = Math.min(BATCH, MESSAGES - b);
    batches.push(Array.from({ length: size }, (_, k) => message((b + k) % CHANNELS, tag, b + k)));
  }
  return batches;
}

async function finishRound(
  kind: "gw" | "raw",
  ids: readonly string[],
  t0: number,
  ingestMs: number,
  cpu0: number,
  sinkCpu0: number,
  offsetMs: number,
  outcomes: Record<string, number>,
): Promise<ThroughputRound> {
  await waitUntil(
    async () => (await sink.count()).n >= ids.length,
    `the sink to receive ${ids.length} deliveries`,
    10_000,
  );
  const cpu = ownCpuUs() - cpu0;
  const sinkCpu = (await sink.cpuUs()) - sinkCpu0;
  const stats = await sink.stats();
  const arrival = new Map(stats.records.map(([id, t]) => [id, t - offsetMs]));
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const id of ids) {
    const t = arrival.get(id);
    if (t === undefined) throw new Error(`the sink has no record of ${id}`);
    first = Math.min(first, t);
    last = Math.max(last, t);
  }
  const wallMs = last - t0;
  return {
    kind,
    n: ids.length,
    wallMs,
    rate: (ids.length / wallMs) * 1000,
    sinkRate: ((ids.length - 1) / (last - first)) * 1000,
    ingestMs,
    cpuUsPerDelivery: cpu / ids.length,
    sinkCpuUsPerDelivery: sinkCpu / ids.length,
    dupes: stats.dupes,
    bad: stats.bad,
    outcomes,
  };
}

async function throughputGw(offsetMs: number, tag: string): Promise<ThroughputRound> {
  const batches = buildBatches(tag);
  await sink.reset();
  const sinkCpu0 = await sink.cpuUs();
  const ids: string[] = [];
  let ingestMs = 0;
  const cpu0 = ownCpuUs();
  const t0 = now();
  for (const messages of batches) {
    const a = now();
    const out = service.ingest({ source: SOURCE, messages, cursor: null });
    ingestMs += now() - a;
    for (const o of out) {
      if (o.status !== "stored" || !o.deliveryId)
        throw new Error(`ingest did not queue a delivery: ${o.status}`);
      ids.push(o.deliveryId);
    }
    await nextTurn();
  }
  await waitUntil(() => service.store.deliveries.counts().pending === 0, "the outbox to drain");
  const outcomes: Record<string, number> = {};
  for (const id of ids) {
    const row = service.store.deliveries.get(id);
    const key = row ? `${row.status}/${row.attempt_count}/${row.last_code ?? row.last_error}` : "missing";
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  return finishRound("gw", ids, t0, ingestMs, cpu0, sinkCpu0, offsetMs, outcomes);
}

async function throughputRaw(offsetMs: number, tag: string): Promise<ThroughputRound> {
  const work = buildBatches(tag)
    .flat()
    .map((m) => ({ id: crypto.randomUUID(), body: rawBody(m) }));
  await sink.reset();
  const sinkCpu0 = await sink.cpuUs();
  const outcomes: Record<string, number> = {};
  let next = 0;
  const cpu0 = ownCpuUs();
  const t0 = now();
  const worker = async () => {
    while (next < work.length) {
      const w = work[next++] as { id: string; body: string };
      const status = await rawPost(w.id, w.body).catch((e: Error) => e.message);
      outcomes[String(status)] = (outcomes[String(status)] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return finishRound(
    "raw",
    work.map((w) => w.id),
    t0,
    0,
    cpu0,
    sinkCpu0,
    offsetMs,
    outcomes,
  );
}

// ---------------------------------------------------------------------------------------------------
// Breakdown: one more gw round with the dispatcher's store calls timed

interface Breakdown {
  deliveries: number;
  wallMs: number;
  /** Milliseconds per delivery spent in each part (main thread, synchronous unless noted). */
  perDeliveryMs: Record<string, number>;
  calls: Record<string, number>;
}

async function breakdown(offsetMs: number): Promise<Breakdown> {
  const totals: Record<string, number> = {};
  const calls: Record<string, number> = {};
  const wrap = <A extends unknown[], R>(name: string, fn: (...args: A) => R) => {
    totals[name] = 0;
    calls[name] = 0;
    return (...args: A): R => {
      const a = performance.now();
      try {
        return fn(...args);
      } finally {
        totals[name] = (totals[name] ?? 0) + performance.now() - a;
        calls[name] = (calls[name] ?? 0) + 1;
      }
    };
  };
  const d = service.store.deliveries;
  const m = service.store.messages;
  const at = service.store.attachments;
  const saved = {
    recordAttempt: d.recordAttempt,
    due: d.due,
    nextDueAt: d.nextDueAt,
    get: m.get,
    fm: at.forMessage,
  };
  d.recordAttempt = wrap("recordAttempt (UPDATE + commit)", saved.recordAttempt);
  d.due = wrap("due (claim query, LIMIT 64)", saved.due);
  d.nextDueAt = wrap("nextDueAt (timer query)", saved.nextDueAt);
  m.get = wrap("messages.get (body)", saved.get);
  at.forMessage = wrap("attachments.forMessage (body)", saved.fm);
  try {
    const r = await throughputGw(offsetMs, "profile");
    const per: Record<string, number> = {};
    for (const [k, v] of Object.entries(totals)) per[k] = v / r.n;
    const timed = Object.values(per).reduce((a, b) => a + b, 0);
    per[`ingest (per message, batches of ${BATCH})`] = r.ingestMs / r.n;
    per["rest: body JSON, sign, fetch, loop, idle"] = r.wallMs / r.n - timed - r.ingestMs / r.n;
    per["= wall time per delivery"] = r.wallMs / r.n;
    per["(process CPU, user+sys, all threads)"] = r.cpuUsPerDelivery / 1000;
    return { deliveries: r.n, wallMs: r.wallMs, perDeliveryMs: per, calls };
  } finally {
    d.recordAttempt = saved.recordAttempt;
    d.due = saved.due;
    d.nextDueAt = saved.nextDueAt;
    m.get = saved.get;
    at.forMessage = saved.fm;
  }
}

// ---------------------------------------------------------------------------------------------------
// Run

/** How much the hypervisor took (steal) over the run, for context. */
const stat0 = cpuJiffies();
const startedAt = performance.now();

try {
  const machine = {
    nproc: navigator.hardwareConcurrency,
    cpu: cpus()[0]?.model ?? "unknown",
    bun: Bun.version,
    platform: `${process.platform}-${process.arch}`,
    tmpdir: tmpdir(),
  };
  progress(`machine: ${JSON.stringify(machine)}; sink on 127.0.0.1:${sink.port}; temp dir ${dir}`);
  const clock0 = await clockOffset();
  progress(`sink clock offset ${clock0.offsetMs.toFixed(3)} ms (ping RTT ${clock0.rttMs.toFixed(3)} ms)`);

  progress(
    `latency: ${WARMUP} warm-up + ${SAMPLES} samples each, gw and raw interleaved, ${GAP_MS} ms apart`,
  );
  const lat = await latency(clock0.offsetMs);

  const rounds: ThroughputRound[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of ["raw", "gw"] as const) {
      progress(
        `throughput round ${r + 1}/${ROUNDS} ${kind}: ${MESSAGES} deliveries over ${CHANNELS} channels`,
      );
      const round =
        kind === "gw"
          ? await throughputGw(clock0.offsetMs, `tp${r}`)
          : await throughputRaw(clock0.offsetMs, `raw${r}`);
      progress(
        `  ${kind}: ${round.rate.toFixed(0)}/s (${round.wallMs.toFixed(0)} ms; sink-side ${round.sinkRate.toFixed(0)}/s) ${JSON.stringify(round.outcomes)}`,
      );
      rounds.push(round);
    }
  }
  if (PROFILE) progress("breakdown round (gw, store calls timed)");
  const prof = PROFILE ? await breakdown(clock0.offsetMs) : null;
  const clock1 = await clockOffset();
  progress(
    `sink clock offset at the end ${clock1.offsetMs.toFixed(3)} ms (RTT ${clock1.rttMs.toFixed(3)} ms)`,
  );

  const gwRounds = rounds.filter((r) => r.kind === "gw");
  const rawRounds = rounds.filter((r) => r.kind === "raw");
  const gwRate = median(gwRounds.map((r) => r.rate));
  const rawRate = median(rawRounds.map((r) => r.rate));
  const gwMin = Math.min(...gwRounds.map((r) => r.rate));
  const steal = stealShare(stat0, cpuJiffies());
  const gwOutcomes: Record<string, number> = {};
  for (const r of gwRounds)
    for (const [k, v] of Object.entries(r.outcomes)) gwOutcomes[k] = (gwOutcomes[k] ?? 0) + v;
  const delivered = gwOutcomes["delivered/1/204"] ?? 0;
  const gwTotal = gwRounds.reduce((a, r) => a + r.n, 0);
  /** Every delivery row of the run (warm-up, latency, rounds, breakdown): status/attempts/last code. */
  const allRows: Record<string, number> = {};
  for (const r of service.store.db
    .query<{ k: string; n: number }, []>(
      "SELECT status || '/' || attempt_count || '/' || COALESCE(last_code, last_error) AS k, COUNT(*) AS n FROM webhook_deliveries GROUP BY k",
    )
    .all())
    allRows[r.k] = r.n;
  const latencyPass = lat.gwFromStored.p50 <= TARGET_P50_MS;
  const ratePass = gwRate >= TARGET_RATE;

  // Table
  const fmt = (x: number, w = 9) => (Number.isFinite(x) ? x.toFixed(2) : "-").padStart(w);
  const line = (name: string, d: Dist) =>
    `${name.padEnd(44)}${fmt(d.p50)}${fmt(d.p90)}${fmt(d.p99)}${fmt(d.max)}${fmt(d.mean)}`;
  const out: string[] = [];
  out.push(
    `\nMachine: ${machine.nproc} CPUs (${machine.cpu}), bun ${machine.bun}, ${machine.platform}; CPU steal during the run ${steal === null ? "n/a" : `${(steal * 100).toFixed(1)} %`}`,
  );
  out.push(
    `\nLatency, ms (${SAMPLES} samples each; cross-process wall clock, offset ${clock0.offsetMs.toFixed(3)} ms corrected)`,
  );
  out.push(
    `${"".padEnd(44)}${"p50".padStart(9)}${"p90".padStart(9)}${"p99".padStart(9)}${"max".padStart(9)}${"mean".padStart(9)}`,
  );
  out.push(line("gw   stored (ingest returned) -> sink", lat.gwFromStored));
  out.push(line("gw   ingest called -> sink", lat.gwFromCall));
  out.push(line("raw  sign + fetch called -> sink", lat.raw));
  out.push(line("  gw ingest call (1 message, commit)", lat.gwIngest));
  out.push(line("  gw stored -> dispatcher calls fetch", lat.gwStoredToFetch));
  out.push(line("  gw fetch called -> sink", lat.gwFetchToArrival));
  out.push(`  body bytes: gw ${lat.gwBytes.toFixed(0)}, raw ${lat.rawBytes.toFixed(0)}`);
  out.push(
    `\nThroughput (${MESSAGES} deliveries per round, ${CHANNELS} channels, batches of ${BATCH}, concurrency ${CONCURRENCY})`,
  );
  out.push(
    `${"round".padEnd(10)}${"deliv/s".padStart(9)}${"wall ms".padStart(9)}${"sink/s".padStart(9)}${"ingest ms".padStart(10)}${"cpu us/d".padStart(10)}${"sink us/d".padStart(10)}  outcomes`,
  );
  rounds.forEach((r, i) => {
    out.push(
      `${`${r.kind} #${Math.floor(i / 2) + 1}`.padEnd(10)}${r.rate.toFixed(0).padStart(9)}${r.wallMs.toFixed(0).padStart(9)}${r.sinkRate.toFixed(0).padStart(9)}${(r.kind === "gw" ? r.ingestMs.toFixed(0) : "-").padStart(10)}${r.cpuUsPerDelivery.toFixed(0).padStart(10)}${r.sinkCpuUsPerDelivery.toFixed(0).padStart(10)}  ${JSON.stringify(r.outcomes)}${r.dupes || r.bad ? ` dupes=${r.dupes} bad=${r.bad}` : ""}`,
    );
  });
  if (prof) {
    out.push(
      `\nBreakdown round (gw, ${prof.deliveries} deliveries, store calls timed; not used for the figures)`,
    );
    for (const [k, v] of Object.entries(prof.perDeliveryMs))
      out.push(
        `  ${k.padEnd(42)}${v.toFixed(3).padStart(9)} ms/delivery${prof.calls[k] !== undefined ? `  (${prof.calls[k]} calls)` : ""}`,
      );
  }
  out.push("\nTargets");
  out.push(
    `  p50 stored -> received <= ${TARGET_P50_MS} ms: ${lat.gwFromStored.p50.toFixed(2)} ms (raw ${lat.raw.p50.toFixed(2)} ms)  ${latencyPass ? "PASS" : "FAIL"}`,
  );
  out.push(
    `  sustained >= ${TARGET_RATE} deliveries/s: ${gwRate.toFixed(0)}/s median of ${gwRounds.length} (raw ${rawRate.toFixed(0)}/s); slowest gw round ${gwMin.toFixed(0)}/s  ${ratePass ? "PASS" : "FAIL"}`,
  );
  out.push(
    `  throughput rounds delivered on the first attempt with 204: ${delivered}/${gwTotal}; all rows of the run (status/attempts/code): ${JSON.stringify(allRows)}; gw warnings/errors logged: ${warnings}`,
  );
  const round3 = (d: Dist) => ({
    n: d.n,
    p50: r2(d.p50),
    p90: r2(d.p90),
    p99: r2(d.p99),
    max: r2(d.max),
    mean: r2(d.mean),
  });
  report({
    bench: "webhooks",
    command: "bun run bench webhooks",
    startedAt,
    lines: out,
    summary: [
      {
        figure: "message stored → signed webhook received, p50 (p99)",
        value: `${r2(lat.gwFromStored.p50)} (${r2(lat.gwFromStored.p99)}) ms`,
        baseline: `raw sign + fetch → received: ${r2(lat.raw.p50)} (${r2(lat.raw.p99)}) ms`,
        ratio: null,
        target: `p50 ≤ ${TARGET_P50_MS} ms`,
        pass: latencyPass,
      },
      {
        figure: `sustained deliveries (${MESSAGES} per round, median of ${gwRounds.length} rounds)`,
        value: `${r1(gwRate)}/s`,
        baseline: `raw loop of ${CONCURRENCY} concurrent fetches: ${r1(rawRate)}/s`,
        ratio: Math.round((gwRate / rawRate) * 100) / 100,
        target: `≥ ${TARGET_RATE}/s`,
        pass: ratePass,
      },
    ],
    results: {
      cpuStealShare: steal === null ? null : r2(steal),
      params: {
        samples: SAMPLES,
        gapMs: GAP_MS,
        messages: MESSAGES,
        channels: CHANNELS,
        batch: BATCH,
        rounds: ROUNDS,
        concurrency: CONCURRENCY,
      },
      clock: {
        offsetStartUs: r1(clock0.offsetMs * 1000),
        offsetEndUs: r1(clock1.offsetMs * 1000),
        rttUs: r1(clock0.rttMs * 1000),
      },
      latencyMs: {
        gwStoredToSink: round3(lat.gwFromStored),
        gwIngestCallToSink: round3(lat.gwFromCall),
        raw: round3(lat.raw),
        gwIngestCall: round3(lat.gwIngest),
        gwStoredToFetch: round3(lat.gwStoredToFetch),
        gwFetchToSink: round3(lat.gwFetchToArrival),
      },
      throughput: {
        gwRate: r1(gwRate),
        gwSlowestRound: r1(gwMin),
        rawRate: r1(rawRate),
        rounds: rounds.map((r) => ({
          kind: r.kind,
          n: r.n,
          rate: r1(r.rate),
          wallMs: r1(r.wallMs),
          sinkRate: r1(r.sinkRate),
          ingestMs: r1(r.ingestMs),
          cpuUsPerDelivery: r1(r.cpuUsPerDelivery),
          sinkCpuUsPerDelivery: r1(r.sinkCpuUsPerDelivery),
          dupes: r.dupes,
          bad: r.bad,
          outcomes: r.outcomes,
        })),
      },
      breakdown: prof
        ? Object.fromEntries(Object.entries(prof.perDeliveryMs).map(([k, v]) => [k, r2(v * 1000) / 1000]))
        : null,
      delivered: { firstAttempt204: delivered, total: gwTotal, outcomes: gwOutcomes, allRows, warnings },
      targets: {
        p50Ms: {
          target: TARGET_P50_MS,
          value: r2(lat.gwFromStored.p50),
          baseline: r2(lat.raw.p50),
          pass: latencyPass,
        },
        deliveriesPerS: { target: TARGET_RATE, value: r1(gwRate), baseline: r1(rawRate), pass: ratePass },
      },
    },
  });
} finally {
  await cleanup();
}
