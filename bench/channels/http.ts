/**
 * bench/channels/channels.ts's measurement of GET /channels: gw's app in a child process built as `gw serve`
 * builds it (lib/gw-server.ts) and the raw baseline (bench/channels/raw.ts: a bare Bun.serve
 * doing the route's work directly) run side by side on the seeded database; this process is the client
 * (fetch, keep-alive) and, for the in-process baseline, calls store.channelList.page on its own
 * connection. Before any timing both servers must give the same JSON for every case, and that JSON the
 * page's channels and counts. Each case: a quiet-machine wait, WARMUP untimed calls per target, then
 * REQUESTS timed sequential calls per target in blocks of REQUESTS/2, in the order gw, raw, page, page,
 * raw, gw. Then CONNECTIONS parallel loops on the first case, gw and raw in ABBA halves.
 */
import { join } from "node:path";
import type { Store } from "../../src/store/store.ts";
import type * as Cases from "../lib/http-cases.ts";
import { get, type Ports, timeCase, timedLine, timeRequests, withServers } from "../lib/http-cases.ts";
import { waitQuiet } from "../lib/machine.ts";
import { type Dist, dist } from "../lib/stats.ts";
import {
  CASES,
  type Case,
  CONNECTIONS,
  casePath,
  pageQuery,
  progress,
  QUIET_WAIT_S,
  REQUESTS,
  WARMUP,
} from "./settings.ts";

type Target = keyof Ports;

interface Answer {
  channels: { channel_id: string; unread_count: number }[];
}

/** A case's figures (the page: store.channelList.page), and the agent it asked as. */
export type CaseResult = Cases.CaseResult & { agent: string };

export interface ConcurrentResult {
  connections: number;
  path: string;
  requests: number;
  gw: { reqPerS: number; ms: Dist };
  raw: { reqPerS: number; ms: Dist };
}

/** Both servers' answers equal, and equal to the in-process page (ids, order, counts); returns rows and bytes. */
async function checkSame(ports: Ports, store: Store, c: Case): Promise<{ rows: number; bytes: number }> {
  const gwBody = await get(ports.gw, casePath(c), c.agent);
  const gw = JSON.parse(gwBody) as Answer;
  if (!Bun.deepEquals(JSON.parse(await get(ports.raw, casePath(c), c.agent)), gw))
    throw new Error(`${c.name}: the raw and gateway answers differ`);
  const page = store.channelList.page(pageQuery(c));
  const ok =
    page.length === gw.channels.length &&
    page.every((r, i) => {
      const a = gw.channels[i];
      return a?.channel_id === r.channel_id && a.unread_count === Math.max(0, r.unread_count);
    });
  if (!ok) throw new Error(`${c.name}: the gateway's answer is not the store's page`);
  return { rows: gw.channels.length, bytes: gwBody.length };
}

async function measureCase(ports: Ports, store: Store, c: Case): Promise<CaseResult> {
  const shape = await checkSame(ports, store, c);
  const q = pageQuery(c);
  const timed = await timeCase(
    ports,
    { path: casePath(c), agent: c.agent, page: () => store.channelList.page(q) },
    { warmup: WARMUP, requests: REQUESTS, quietS: QUIET_WAIT_S, progress },
  );
  const r: CaseResult = { name: c.name, path: casePath(c), agent: c.agent, ...shape, ...timed };
  progress(timedLine(c.name, r));
  return r;
}

/** `n` requests over CONNECTIONS loops in parallel; returns the wall time, ms. */
async function parallel(port: number, c: Case, n: number, into: number[]): Promise<number> {
  const t0 = performance.now();
  const per = Math.ceil(n / CONNECTIONS);
  await Promise.all(
    Array.from({ length: CONNECTIONS }, () => timeRequests(port, casePath(c), c.agent, per, into)),
  );
  return performance.now() - t0;
}

async function measureConcurrent(ports: Ports, c: Case): Promise<ConcurrentResult> {
  await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const n = REQUESTS * 2;
  const ms: Record<Target, number[]> = { gw: [], raw: [] };
  const wall: Record<Target, number> = { gw: 0, raw: 0 };
  await parallel(ports.gw, c, WARMUP * CONNECTIONS, []);
  await parallel(ports.raw, c, WARMUP * CONNECTIONS, []);
  for (const t of ["gw", "raw", "raw", "gw"] as const) wall[t] += await parallel(ports[t], c, n / 2, ms[t]);
  const rate = (t: Target) => Math.round((ms[t].length / wall[t]) * 1000);
  const r: ConcurrentResult = {
    connections: CONNECTIONS,
    path: casePath(c),
    requests: ms.gw.length,
    gw: { reqPerS: rate("gw"), ms: dist(ms.gw) },
    raw: { reqPerS: rate("raw"), ms: dist(ms.raw) },
  };
  progress(
    `  ${CONNECTIONS} connections: gw ${r.gw.reqPerS} req/s (p99 ${r.gw.ms.p99} ms), raw ${r.raw.reqPerS} req/s (p99 ${r.raw.ms.p99} ms)`,
  );
  return r;
}

/** Runs both servers on `dir` and measures every case, then the concurrent run; stops the servers. */
export function measureHttp(dir: string, store: Store) {
  return withServers(dir, join(import.meta.dir, "raw.ts"), async (ports) => {
    const cases: CaseResult[] = [];
    for (const c of CASES) cases.push(await measureCase(ports, store, c));
    const concurrent = await measureConcurrent(ports, CASES[0] as Case);
    return { cases, concurrent };
  });
}
