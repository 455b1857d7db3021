/**
 * One HTTP case of a route benchmark timed next to its raw server and its store call (channels/channels.ts,
 * events/events.ts): warm-up, then halves in the order gw, raw, page, page, raw, gw, so a drift of the machine
 * falls on both servers alike; and the text table of such cases.
 */
import { ratio, textTable } from "./report.ts";
import { type Dist, dist } from "./stats.ts";

/** Times `n` calls into `into` (ms for a server, µs for the in-process page). */
export type Timer = (n: number, into: number[]) => void | Promise<void>;

export interface Timed {
  gw: Dist;
  raw: Dist;
  page: Dist;
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
