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
import { timeAbba, timedLine } from "../lib/http-cases.ts";
import { startGwServer, startServer, stopServer } from "../lib/http-server.ts";
import { waitQuiet } from "../lib/machine.ts";
import type { Session } from "../lib/session.ts";
import { TOKEN } from "../lib/settings.ts";
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

type Target = "gw" | "raw";
type Ports = Record<Target, number>;

interface Answer {
  channels: { channel_id: string; unread_count: number }[];
}

export interface CaseResult {
  name: string;
  path: string;
  agent: string;
  rows: number;
  bytes: number;
  /** Round trip of one request, ms. */
  gw: Dist;
  raw: Dist;
  /** store.channelList.page in this process, µs. */
  page: Dist;
  quietWaitS: number;
}

export interface ConcurrentResult {
  connections: number;
  path: string;
  requests: number;
  gw: { reqPerS: number; ms: Dist };
  raw: { reqPerS: number; ms: Dist };
}

async function get(port: number, c: Case): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${casePath(c)}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": c.agent },
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${casePath(c)} as ${c.agent}: ${res.status} ${body}`);
  return body;
}

/** Both servers' answers equal, and equal to the in-process page (ids, order, counts); returns rows and bytes. */
async function checkSame(ports: Ports, store: Store, c: Case): Promise<{ rows: number; bytes: number }> {
  const gwBody = await get(ports.gw, c);
  const gw = JSON.parse(gwBody) as Answer;
  if (!Bun.deepEquals(JSON.parse(await get(ports.raw, c)), gw))
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

async function timeRequests(port: number, c: Case, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = Bun.nanoseconds();
    await get(port, c);
    into.push((Bun.nanoseconds() - t) / 1e6);
  }
}

function timePages(store: Store, c: Case, n: number, into: number[]): void {
  const q = pageQuery(c);
  for (let i = 0; i < n; i++) {
    const t = Bun.nanoseconds();
    store.channelList.page(q);
    into.push((Bun.nanoseconds() - t) / 1e3);
  }
}

async function measureCase(ports: Ports, store: Store, c: Case): Promise<CaseResult> {
  const shape = await checkSame(ports, store, c);
  const quietWaitS = await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const timed = await timeAbba(
    {
      gw: (n, into) => timeRequests(ports.gw, c, n, into),
      raw: (n, into) => timeRequests(ports.raw, c, n, into),
      page: (n, into) => timePages(store, c, n, into),
    },
    { warmup: WARMUP, requests: REQUESTS },
  );
  const r: CaseResult = {
    name: c.name,
    path: casePath(c),
    agent: c.agent,
    ...shape,
    ...timed,
    quietWaitS,
  };
  progress(timedLine(c.name, r));
  return r;
}

/** `n` requests over CONNECTIONS loops in parallel; returns the wall time, ms. */
async function parallel(port: number, c: Case, n: number, into: number[]): Promise<number> {
  const t0 = performance.now();
  const per = Math.ceil(n / CONNECTIONS);
  await Promise.all(Array.from({ length: CONNECTIONS }, () => timeRequests(port, c, per, into)));
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
export async function measureHttp(dir: string, session: Session, store: Store) {
  const gateway = await startGwServer(dir);
  session.track(gateway.proc);
  const raw = await startServer(join(import.meta.dir, "raw.ts"), "raw", dir);
  session.track(raw.proc);
  const ports: Ports = { gw: gateway.port, raw: raw.port };
  try {
    const cases: CaseResult[] = [];
    for (const c of CASES) cases.push(await measureCase(ports, store, c));
    const concurrent = await measureConcurrent(ports, CASES[0] as Case);
    return { cases, concurrent };
  } finally {
    await stopServer(gateway);
    await stopServer(raw);
  }
}
