/**
 * bench/webhooks/webhooks.ts's latency phase: WARMUP + SAMPLES single allowed messages over 8 channels, one at a
 * time, each followed by a BENCH_GAP_MS pause once its POST was answered: stored (svc.ingest()
 * returned) → the sink's arrival, with the dispatcher's fetch call in between; interleaved with the raw
 * baseline, the same kind of signed body POSTed directly, from just before signing to the arrival.
 * Arrivals are on the sink's clock, corrected by its offset.
 */
import { now } from "../lib/child-protocol.ts";
import type { Bench } from "./gw.ts";
import {
  type Dist,
  dist,
  GAP_MS,
  LATENCY_CHANNELS,
  SAMPLES,
  SOURCE,
  TIMEOUT_MS,
  WARMUP,
  waitUntil,
  withTimeout,
} from "./settings.ts";

export interface LatencyResult {
  gwFromStored: Dist;
  gwFromCall: Dist;
  gwIngest: Dist;
  gwStoredToFetch: Dist;
  gwFetchToArrival: Dist;
  raw: Dist;
  gwBytes: number;
  rawBytes: number;
}

export async function latency(b: Bench, offsetMs: number): Promise<LatencyResult> {
  const { sink } = b;
  const { service, answered, fetchCalledAt } = b.gw;
  const { message, rawBody, rawPost } = b.kit;
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
