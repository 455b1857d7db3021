/**
 * bench/discord/discord.ts's latency phase: gw and a raw discord.js client are the same bot on one fake. Per
 * sample: stamp, post one message from Ann, poll unread every BENCH_STEP_MS until it is listed, mark it
 * read, time one idle poll, pause 20–120 ms (seeded). From the stamp: the raw client's dispatch and
 * messageCreate, gw's dispatch, ingest call and commit (stamped in gw), the unread answer, the webhook
 * at the sink; each child's clock corrected by its measured offset.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import { startChild } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import type { SummaryRow } from "../lib/report.ts";
import { PATH, SECRET, TOKEN } from "../lib/settings.ts";
import { Sink, type SinkStats } from "../lib/sink.ts";
import { type TailDist as Dist, tailDist as dist, r2, r3 } from "../lib/stats.ts";
import { type DiscordRun, fakeGwEnv, messagesDdl, startFake, startGw, stopFake } from "./procs.ts";
import {
  AGENT,
  HERE,
  progress,
  RAW_STORE,
  random,
  SAMPLES,
  STEP_MS,
  TARGET_GAP_MS,
  WARMUP,
} from "./settings.ts";

export interface LatencyResult {
  rawDispatch: Dist;
  rawEvent: Dist;
  rawStored: Dist;
  gwDispatch: Dist;
  gwCommit: Dist;
  gwUnread: Dist;
  gwWebhook: Dist;
  /** Per-sample differences. */
  pairedUnreadMinusRaw: Dist;
  pairedCommitMinusGwDispatch: Dist;
  pairedGwDispatchMinusRawDispatch: Dist;
  pairedRawEventMinusRawDispatch: Dist;
  pairedIngestBeginMinusGwDispatch: Dist;
  pairedCommitMinusIngestBegin: Dist;
  post: Dist;
  pollsPerSample: Dist;
  firstPollHits: number;
  httpRtt: Dist;
  webhooks: { received: number; dupes: number; badSignatures: number; expected: number };
  missing: Record<string, number>;
  offsets: Record<string, { ms: number; errMs: number }>;
  gwFirstPerSession: number;
  wallS: number;
}

interface Sample {
  text: string;
  tPost: number;
  postMs: number;
  tVisible: number;
  polls: number;
}

/** The fake with Ann in #general, the sink, gw (tracing) and the raw client, both sessions up. */
async function startProcesses(run: DiscordRun) {
  const fake = await startFake(run);
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const guild = fake.guild({ name: "bench" });
  const channel = fake.channel(guild.id, { name: "general" });
  const sink = await Sink.start(SECRET);
  const gw = await startGw(
    "gw",
    fakeGwEnv(join(run.root, "latency"), fake.apiUrl, ann, {
      GW_WEBHOOK_URL: `http://127.0.0.1:${sink.port}/webhook`,
      GW_WEBHOOK_SECRET: SECRET,
      BENCH_TRACE: "1",
    }),
  );
  const rawDir = join(run.root, "latency-raw");
  mkdirSync(rawDir, { recursive: true });
  const { child: raw } = await startChild("raw", [join(HERE, "raw.ts"), "client"], {
    PATH,
    BENCH_TOKEN: FAKE_BOT_TOKEN,
    BENCH_API_URL: fake.apiUrl,
    ...(RAW_STORE
      ? {
          BENCH_RAW_STORE: JSON.stringify({
            dbPath: join(rawDir, "raw.db"),
            ddl: messagesDdl(join(run.root, "latency/data/gw.db")),
          }),
        }
      : {}),
  });
  if (fake.gateway.connections() !== 2)
    throw new Error(`expected 2 gateway sessions, found ${fake.gateway.connections()}`);
  return { fake, ann, channelId: channel.id, sink, gw, raw };
}

type Procs = Awaited<ReturnType<typeof startProcesses>>;

/** Posts one message and polls unread until it is listed; marks it read, then times one idle poll. */
async function oneSample(p: Procs, text: string, rtts: number[]): Promise<Sample> {
  const base = `http://127.0.0.1:${p.gw.port}`;
  const headers = { authorization: `Bearer ${TOKEN}`, "x-agent-id": AGENT };
  const tPost = now();
  p.fake.message(p.channelId, { author: p.ann, content: text });
  const postMs = now() - tPost;
  let polls = 0;
  for (;;) {
    const res = await fetch(`${base}/messages/unread?limit=20`, { headers });
    const body = (await res.json()) as { messages: { id: string; text: string }[] };
    const tRes = now();
    polls += 1;
    if (!res.ok) throw new Error(`GET /messages/unread: ${res.status} ${JSON.stringify(body)}`);
    if (body.messages.some((m) => m.text === text)) {
      const mark = await fetch(`${base}/messages/mark_read`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ message_ids: body.messages.map((m) => m.id) }),
      });
      if (!mark.ok) throw new Error(`POST /messages/mark_read: ${mark.status}`);
      // One more poll with nothing new: the bare HTTP round trip of GET /messages/unread.
      const tIdle = now();
      await (await fetch(`${base}/messages/unread?limit=20`, { headers })).arrayBuffer();
      rtts.push(now() - tIdle);
      return { text, tPost, postMs, tVisible: tRes, polls };
    }
    if (now() - tPost > 5_000) throw new Error(`message ${text} not listed after 5 s`);
    if (STEP_MS > 0) await Bun.sleep(STEP_MS);
  }
}

/** WARMUP untimed then SAMPLES timed samples, a seeded pause after each. */
async function sampleAll(p: Procs) {
  const samples: Sample[] = [];
  const rtts: number[] = [];
  const t0 = now();
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const s = await oneSample(p, `${i < WARMUP ? "warm" : "s"}-${i}`, rtts);
    if (i >= WARMUP) samples.push(s);
    if (i >= WARMUP && (i - WARMUP + 1) % 100 === 0) progress(`latency: ${i - WARMUP + 1}/${SAMPLES}`);
    await Bun.sleep(20 + random() * 100);
  }
  return { samples, rtts, wallS: (now() - t0) / 1000 };
}

/** Every stamp by text, on our clock: the raw client's, gw's, and the webhook arrivals at the sink. */
async function collectStamps(p: Procs, expected: number) {
  // Webhooks may trail the last sample by a few ms.
  const deadline = now() + 10_000;
  let sinkStats: SinkStats;
  for (;;) {
    sinkStats = await p.sink.stats();
    if (sinkStats.n >= expected || now() > deadline) break;
    await Bun.sleep(20);
  }
  const gwStamps = await p.gw.child.request({ cmd: "stamps" });
  const rawStamps = await p.raw.request({ cmd: "stamps" });
  const deliveries = (await p.gw.child.request({ cmd: "deliveries" })).rows as {
    delivery: string;
    text: string;
  }[];
  const toMap = (pairs: unknown, offset: number) => {
    const m = new Map<string, number>();
    for (const [text, t] of pairs as [string, number][]) if (!m.has(text)) m.set(text, t - offset);
    return m;
  };
  const stamps = {
    rawDispatch: toMap(rawStamps.dispatch, p.raw.offsetMs),
    rawEvent: toMap(rawStamps.event, p.raw.offsetMs),
    rawStored: toMap(rawStamps.stored, p.raw.offsetMs),
    gwDispatch: toMap(gwStamps.dispatch, p.gw.child.offsetMs),
    gwIngestBegin: toMap(gwStamps.ingestBegun, p.gw.child.offsetMs),
    gwCommit: toMap(gwStamps.ingested, p.gw.child.offsetMs),
    gwWebhook: new Map<string, number>(),
  };
  const textOf = new Map(deliveries.map((d) => [d.delivery, d.text]));
  for (const [id, t] of sinkStats.records) {
    const text = textOf.get(id);
    if (text !== undefined) stamps.gwWebhook.set(text, t - p.sink.offsetMs);
  }
  return { stamps, sinkStats };
}

type Stamps = Awaited<ReturnType<typeof collectStamps>>["stamps"];

/** The distributions from the post stamp and the paired differences; which session the fake served first. */
function distributions(samples: readonly Sample[], stamps: Stamps) {
  const missing: Record<string, number> = {};
  const since = (key: keyof Stamps) => {
    const out: number[] = [];
    if (key === "rawStored" && !RAW_STORE) return out;
    for (const s of samples) {
      const t = stamps[key].get(s.text);
      if (t === undefined) missing[key] = (missing[key] ?? 0) + 1;
      else out.push(t - s.tPost);
    }
    return out;
  };
  const paired = (a: (s: Sample) => number | undefined, b: keyof Stamps) => {
    const out: number[] = [];
    for (const s of samples) {
      const x = a(s);
      const y = stamps[b].get(s.text);
      if (x !== undefined && y !== undefined) out.push(x - y);
    }
    return out;
  };
  // Which session the fake served first alternates (gateway.ts); count how often gw's came first.
  let gwFirst = 0;
  for (const s of samples) {
    const g = stamps.gwDispatch.get(s.text);
    const r = stamps.rawDispatch.get(s.text);
    if (g !== undefined && r !== undefined && g < r) gwFirst += 1;
  }
  return {
    rawDispatch: dist(since("rawDispatch")),
    rawEvent: dist(since("rawEvent")),
    rawStored: dist(since("rawStored")),
    gwDispatch: dist(since("gwDispatch")),
    gwCommit: dist(since("gwCommit")),
    gwUnread: dist(samples.map((s) => s.tVisible - s.tPost)),
    gwWebhook: dist(since("gwWebhook")),
    pairedUnreadMinusRaw: dist(paired((s) => s.tVisible, "rawEvent")),
    pairedCommitMinusGwDispatch: dist(paired((s) => stamps.gwCommit.get(s.text), "gwDispatch")),
    pairedGwDispatchMinusRawDispatch: dist(paired((s) => stamps.gwDispatch.get(s.text), "rawDispatch")),
    pairedRawEventMinusRawDispatch: dist(paired((s) => stamps.rawEvent.get(s.text), "rawDispatch")),
    pairedIngestBeginMinusGwDispatch: dist(paired((s) => stamps.gwIngestBegin.get(s.text), "gwDispatch")),
    pairedCommitMinusIngestBegin: dist(paired((s) => stamps.gwCommit.get(s.text), "gwIngestBegin")),
    missing,
    gwFirst,
  };
}

function verdicts(r: LatencyResult, expected: number): SummaryRow[] {
  const gap = r2(r.gwUnread.p50 - r.rawEvent.p50);
  return [
    {
      figure: "MESSAGE_CREATE → listed by GET /messages/unread",
      value: `p50 ${r.gwUnread.p50} ms (p99 ${r.gwUnread.p99}); gap ${gap} ms (paired p50 ${r.pairedUnreadMinusRaw.p50} ms)`,
      baseline: `raw discord.js messageCreate p50 ${r.rawEvent.p50} ms (p99 ${r.rawEvent.p99})`,
      ratio: null,
      target: `p50 within ${TARGET_GAP_MS} ms of the raw event`,
      pass: gap <= TARGET_GAP_MS && Object.keys(r.missing).length === 0,
    },
    {
      figure: "MESSAGE_CREATE → signed webhook received",
      value: `p50 ${r.gwWebhook.p50} ms, p99 ${r.gwWebhook.p99} ms; ${r.webhooks.received}/${expected} received, ${r.webhooks.dupes} dupes, ${r.webhooks.badSignatures} bad signatures`,
      baseline: `raw messageCreate p50 ${r.rawEvent.p50} ms`,
      ratio: null,
      target: "",
      pass: null,
    },
  ];
}

export async function latencyPhase(
  run: DiscordRun,
): Promise<{ result: LatencyResult; verdicts: SummaryRow[] }> {
  const p = await startProcesses(run);
  progress(`latency: gw and raw discord.js on one fake; ${SAMPLES} samples (+${WARMUP} warm-up)`);
  const { samples, rtts, wallS } = await sampleAll(p);
  const expected = WARMUP + SAMPLES;
  const { stamps, sinkStats } = await collectStamps(p, expected);
  const { missing, gwFirst, ...dists } = distributions(samples, stamps);
  const r: LatencyResult = {
    ...dists,
    post: dist(samples.map((s) => s.postMs)),
    pollsPerSample: dist(samples.map((s) => s.polls)),
    firstPollHits: samples.filter((s) => s.polls === 1).length,
    httpRtt: dist(rtts),
    webhooks: { received: sinkStats.n, dupes: sinkStats.dupes, badSignatures: sinkStats.bad, expected },
    missing,
    offsets: {
      gw: { ms: r3(p.gw.child.offsetMs), errMs: r3(p.gw.child.offsetErrMs) },
      raw: { ms: r3(p.raw.offsetMs), errMs: r3(p.raw.offsetErrMs) },
      sink: { ms: r3(p.sink.offsetMs), errMs: r3(p.sink.offsetErrMs) },
    },
    gwFirstPerSession: gwFirst,
    wallS: Math.round(wallS * 10) / 10,
  };
  for (const c of [p.gw.child, p.raw, p.sink]) await c.stop();
  await stopFake(run, p.fake);
  return { result: r, verdicts: verdicts(r, expected) };
}
