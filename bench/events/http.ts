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
import { type CaseResult, get, type Ports, timeCase, timedLine, withServers } from "../lib/http-cases.ts";
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

const since = (c: Case, cursors: Cursors) => cursors[c.at];
const limitOf = (c: Case) => c.limit ?? 20;

function page(store: Store, c: Case, cursors: Cursors) {
  const rows = store.events.visibleAfter(since(c, cursors), limitOf(c));
  return { events: rows.map(toEvent), next_since: rows.at(-1)?.id ?? since(c, cursors) };
}

/** Both servers' answers equal, and equal to the store's page; returns rows and bytes. */
async function checkSame(ports: Ports, store: Store, c: Case, cursors: Cursors) {
  const path = casePath(c, cursors);
  const gwBody = await get(ports.gw, path, AGENT);
  const gw = JSON.parse(gwBody) as { events: unknown[] };
  if (!Bun.deepEquals(JSON.parse(await get(ports.raw, path, AGENT)), gw))
    throw new Error(`${c.name}: the raw and gateway answers differ`);
  if (!Bun.deepEquals(JSON.parse(JSON.stringify(page(store, c, cursors))), gw))
    throw new Error(`${c.name}: the gateway's answer is not the store's page`);
  const expected = c.at === "end" ? Math.min(50, limitOf(c)) : limitOf(c);
  if (gw.events.length !== expected)
    throw new Error(`${c.name}: ${gw.events.length} events, wanted ${expected}`);
  return { rows: gw.events.length, bytes: gwBody.length };
}

async function measureCase(ports: Ports, store: Store, c: Case, cursors: Cursors): Promise<CaseResult> {
  const path = casePath(c, cursors);
  const shape = await checkSame(ports, store, c, cursors);
  const timed = await timeCase(
    ports,
    { path, agent: AGENT, page: () => page(store, c, cursors) },
    { warmup: WARMUP, requests: REQUESTS, quietS: QUIET_WAIT_S, progress },
  );
  const r: CaseResult = {
    name: c.name,
    path: path.replace(/evt_[0-9A-Z]{26}/, "<evt id>"),
    ...shape,
    ...timed,
  };
  progress(timedLine(c.name, r));
  return r;
}

/** Runs both servers on `dir` and measures every case; stops the servers. */
export function measureHttp(dir: string, store: Store, cursors: Cursors) {
  return withServers(dir, join(import.meta.dir, "raw.ts"), async (ports) => {
    const cases: CaseResult[] = [];
    for (const c of CASES) cases.push(await measureCase(ports, store, c, cursors));
    return cases;
  });
}
