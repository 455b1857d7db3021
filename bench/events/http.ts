/**
 * bench/events/events.ts's measurement of GET /events: gw's app in a child process built as `gw serve` builds
 * it (lib/gw-server.ts: bearer, X-Agent-ID, schema validation, the route) and the raw
 * baseline (bench/events/raw.ts: a bare Bun.serve and bun:sqlite running the same query) side by side on
 * the seeded database; this process is the client (fetch, keep-alive) and, for the in-process figure,
 * calls store.events.visibleAfter on its own connection. Before any timing both servers must give the
 * same JSON for every case, and that JSON the store's page. Each case: a quiet-machine wait, WARMUP
 * untimed calls per target, then REQUESTS timed sequential calls per target in blocks of REQUESTS/2, in
 * the order gw, raw, page, page, raw, gw.
 */
import { join } from "node:path";
import { toEvent } from "../../src/store/events.ts";
import type { Store } from "../../src/store/store.ts";
import { timeAbba, timedLine } from "../lib/http-cases.ts";
import { startGwServer, startServer, stopServer } from "../lib/http-server.ts";
import { waitQuiet } from "../lib/machine.ts";
import type { Session } from "../lib/session.ts";
import { TOKEN } from "../lib/settings.ts";
import type { Dist } from "../lib/stats.ts";
import {
  AGENT,
  CASES,
  type Case,
  type Cursors,
  casePath,
  progress,
  QUIET_WAIT_S,
  REQUESTS,
  WARMUP,
} from "./settings.ts";

type Target = "gw" | "raw";
type Ports = Record<Target, number>;

export interface CaseResult {
  name: string;
  path: string;
  rows: number;
  bytes: number;
  /** Round trip of one request, ms. */
  gw: Dist;
  raw: Dist;
  /** store.events.visibleAfter + toEvent in this process, µs. */
  page: Dist;
  quietWaitS: number;
}

async function get(port: number, path: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": AGENT },
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${body}`);
  return body;
}

const since = (c: Case, cursors: Cursors) => cursors[c.at];
const limitOf = (c: Case) => c.limit ?? 20;

function page(store: Store, c: Case, cursors: Cursors) {
  const rows = store.events.visibleAfter(since(c, cursors), limitOf(c));
  return { events: rows.map(toEvent), next_since: rows.at(-1)?.id ?? since(c, cursors) };
}

/** Both servers' answers equal, and equal to the store's page; returns rows and bytes. */
async function checkSame(ports: Ports, store: Store, c: Case, cursors: Cursors) {
  const path = casePath(c, cursors);
  const gwBody = await get(ports.gw, path);
  const gw = JSON.parse(gwBody) as { events: unknown[] };
  if (!Bun.deepEquals(JSON.parse(await get(ports.raw, path)), gw))
    throw new Error(`${c.name}: the raw and gateway answers differ`);
  if (!Bun.deepEquals(JSON.parse(JSON.stringify(page(store, c, cursors))), gw))
    throw new Error(`${c.name}: the gateway's answer is not the store's page`);
  const expected = c.at === "end" ? Math.min(50, limitOf(c)) : limitOf(c);
  if (gw.events.length !== expected)
    throw new Error(`${c.name}: ${gw.events.length} events, wanted ${expected}`);
  return { rows: gw.events.length, bytes: gwBody.length };
}

async function timeRequests(port: number, path: string, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = Bun.nanoseconds();
    await get(port, path);
    into.push((Bun.nanoseconds() - t) / 1e6);
  }
}

function timePages(store: Store, c: Case, cursors: Cursors, n: number, into: number[]): void {
  for (let i = 0; i < n; i++) {
    const t = Bun.nanoseconds();
    page(store, c, cursors);
    into.push((Bun.nanoseconds() - t) / 1e3);
  }
}

async function measureCase(ports: Ports, store: Store, c: Case, cursors: Cursors): Promise<CaseResult> {
  const path = casePath(c, cursors);
  const shape = await checkSame(ports, store, c, cursors);
  const quietWaitS = await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const timed = await timeAbba(
    {
      gw: (n, into) => timeRequests(ports.gw, path, n, into),
      raw: (n, into) => timeRequests(ports.raw, path, n, into),
      page: (n, into) => timePages(store, c, cursors, n, into),
    },
    { warmup: WARMUP, requests: REQUESTS },
  );
  const r: CaseResult = {
    name: c.name,
    path: path.replace(/evt_[0-9A-Z]{26}/, "<evt id>"),
    ...shape,
    ...timed,
    quietWaitS,
  };
  progress(timedLine(c.name, r));
  return r;
}

/** Runs both servers on `dir` and measures every case; stops the servers. */
export async function measureHttp(dir: string, session: Session, store: Store, cursors: Cursors) {
  const gateway = await startGwServer(dir);
  session.track(gateway.proc);
  const raw = await startServer(join(import.meta.dir, "raw.ts"), "raw", dir);
  session.track(raw.proc);
  const ports: Ports = { gw: gateway.port, raw: raw.port };
  try {
    const cases: CaseResult[] = [];
    for (const c of CASES) cases.push(await measureCase(ports, store, c, cursors));
    return cases;
  } finally {
    await stopServer(gateway);
    await stopServer(raw);
  }
}
