/**
 * One HTTP case of a route benchmark timed next to its raw server and its store call (channels.ts,
 * events.ts): both servers started on the seeded work dir (gw's and the room's raw child), each case
 * after a quiet-machine wait, warm-up, then halves in the order gw, raw, page, page, raw, gw, so a drift
 * of the machine falls on both servers alike; and the text table of such cases.
 */
import { startGwServer, startServer, stopServer } from "./http-server.ts";
import { waitQuiet } from "./machine.ts";
import { ratio, textTable } from "./report.ts";
import { TOKEN } from "./settings.ts";
import { type Dist, dist } from "./stats.ts";

/** The two servers' ports. */
export interface Ports {
  gw: number;
  raw: number;
}

/** GET `path` from a server as `agent` (this run's bearer); the body, or an error naming the status. */
export async function get(port: number, path: string, agent: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": agent },
  });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`GET ${path} as ${agent}: ${res.status} ${body}`);
  return body;
}

/** gw's server and the raw child `rawScript` on `dir` while `measure` runs; both stopped after. */
export async function withServers<T>(
  dir: string,
  rawScript: string,
  measure: (ports: Ports) => Promise<T>,
): Promise<T> {
  const gateway = await startGwServer(dir);
  const raw = await startServer(rawScript, "raw", dir);
  try {
    return await measure({ gw: gateway.port, raw: raw.port });
  } finally {
    await stopServer(gateway);
    await stopServer(raw);
  }
}

/** Times `n` sequential GETs of `path` as `agent` into `into`, ms. */
export async function timeRequests(port: number, path: string, agent: string, n: number, into: number[]) {
  for (let i = 0; i < n; i++) {
    const t = Bun.nanoseconds();
    await get(port, path, agent);
    into.push((Bun.nanoseconds() - t) / 1e6);
  }
}

/**
 * One case: a quiet-machine wait (at most `quietS`), then GET `path` as `agent` on both servers and
 * `page()` in this process, timed ABBA.
 */
export async function timeCase(
  ports: Ports,
  c: { path: string; agent: string; page: () => unknown },
  o: { warmup: number; requests: number; quietS: number; progress: (s: string) => void },
): Promise<Timed & { quietWaitS: number }> {
  const quietWaitS = await waitQuiet(o.quietS, (s) => o.progress(`  ${s}`));
  const timed = await timeAbba(
    {
      gw: (n, into) => timeRequests(ports.gw, c.path, c.agent, n, into),
      raw: (n, into) => timeRequests(ports.raw, c.path, c.agent, n, into),
      page: (n, into) => {
        for (let i = 0; i < n; i++) {
          const t = Bun.nanoseconds();
          c.page();
          into.push((Bun.nanoseconds() - t) / 1e3);
        }
      },
    },
    o,
  );
  return { ...timed, quietWaitS };
}

/** Times `n` calls into `into` (ms for a server, µs for the in-process page). */
export type Timer = (n: number, into: number[]) => void | Promise<void>;

/** Round trips of one request (gw, raw), ms; the page call in process, µs. */
export interface Timed {
  gw: Dist;
  raw: Dist;
  page: Dist;
}

/** One case's figures: its name and path, the answer's rows and bytes, the timings, the quiet wait. */
export interface CaseResult extends Timed {
  name: string;
  path: string;
  rows: number;
  bytes: number;
  quietWaitS: number;
}

export async function timeAbba(
  t: { gw: Timer; raw: Timer; page: Timer },
  o: { warmup: number; requests: number },
): Promise<Timed> {
  for (const warm of [t.gw, t.raw, t.page]) await warm(o.warmup, []);
  const ms = { gw: [] as number[], raw: [] as number[] };
  const us: number[] = [];
  const half = Math.ceil(o.requests / 2);
  const rest = o.requests - half;
  await t.gw(half, ms.gw);
  await t.raw(half, ms.raw);
  await t.page(half, us);
  await t.page(rest, us);
  await t.raw(rest, ms.raw);
  await t.gw(rest, ms.gw);
  return { gw: dist(ms.gw), raw: dist(ms.raw), page: dist(us) };
}

/** The progress line of a timed case. */
export const timedLine = (name: string, r: Timed & { rows: number; bytes: number }): string =>
  `  ${name}: gw p50 ${r.gw.p50} p99 ${r.gw.p99} ms; raw p50 ${r.raw.p50} p99 ${r.raw.p99} ms; ` +
  `page p50 ${r.page.p50} p99 ${r.page.p99} µs (${r.rows} rows, ${r.bytes} bytes)`;

const n = (x: number) => x.toLocaleString("en-US");
const f = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** The cases as a text table; `gwPerPage` adds gw's p50 over the page's. */
export function caseTable(
  cases: readonly (Timed & { name: string; rows: number; bytes: number })[],
  opts: { gwPerPage?: boolean } = {},
): string[] {
  return textTable(
    [
      "case",
      "rows",
      "bytes",
      "gw p50/p99 ms",
      "raw p50/p99 ms",
      "page p50/p99 µs",
      "gw/raw p50",
      "gw/raw p99",
      ...(opts.gwPerPage ? ["gw/page p50"] : []),
    ],
    cases.map((c) => [
      c.name,
      String(c.rows),
      n(c.bytes),
      `${f(c.gw.p50)} / ${f(c.gw.p99)}`,
      `${f(c.raw.p50)} / ${f(c.raw.p99)}`,
      `${f(c.page.p50)} / ${f(c.page.p99)}`,
      String(ratio(c.gw.p50, c.raw.p50)),
      String(ratio(c.gw.p99, c.raw.p99)),
      ...(opts.gwPerPage ? [String(ratio(c.gw.p50 * 1000, c.page.p50))] : []),
    ]),
  );
}
