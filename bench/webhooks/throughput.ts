/**
 * bench/webhooks/webhooks.ts's throughput phase: MESSAGES allowed messages over CHANNELS channels, ingested in
 * batches of BATCH with a turn of the event loop between batches, timed from the first ingest call to
 * the last sink arrival; the raw baseline is CONCURRENCY workers POSTing the same number of signed
 * bodies, no database. Each round also records the delivery rows' outcomes and both processes' CPU.
 * The breakdown round times the dispatcher's store calls (wrapped on svc.store at run time).
 */
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { now } from "../lib/child-protocol.ts";
import type { Sink } from "../lib/sink.ts";
import type { Bench } from "./gw.ts";
import { BATCH, CHANNELS, CONCURRENCY, MESSAGES, nextTurn, SOURCE, waitUntil } from "./settings.ts";

const ownCpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

export interface ThroughputRound {
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

function buildBatches(b: Bench, tag: string): NormalizedMessage[][] {
  const { message } = b.kit;
  const batches: NormalizedMessage[][] = [];
  for (let s = 0; s < MESSAGES; s += BATCH) {
    const size = Math.min(BATCH, MESSAGES - s);
    batches.push(Array.from({ length: size }, (_, k) => message((s + k) % CHANNELS, tag, s + k)));
  }
  return batches;
}

async function finishRound(
  sink: Sink,
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

export async function throughputGw(b: Bench, offsetMs: number, tag: string): Promise<ThroughputRound> {
  const { sink } = b;
  const { service } = b.gw;
  const batches = buildBatches(b, tag);
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
  return finishRound(sink, "gw", ids, t0, ingestMs, cpu0, sinkCpu0, offsetMs, outcomes);
}

export async function throughputRaw(b: Bench, offsetMs: number, tag: string): Promise<ThroughputRound> {
  const { sink } = b;
  const { rawBody, rawPost } = b.kit;
  const work = buildBatches(b, tag)
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
    sink,
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

/** Breakdown: one more gw round with the dispatcher's store calls timed. */
export interface Breakdown {
  deliveries: number;
  wallMs: number;
  /** Milliseconds per delivery spent in each part (main thread, synchronous unless noted). */
  perDeliveryMs: Record<string, number>;
  calls: Record<string, number>;
}

export async function breakdown(b: Bench, offsetMs: number): Promise<Breakdown> {
  const { service } = b.gw;
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
    const r = await throughputGw(b, offsetMs, "profile");
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
