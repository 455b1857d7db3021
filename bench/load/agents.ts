/**
 * Child process of bench/load/load.ts: the load generator, in its own process so it never shares gw's event
 * loop. `fetch` over keep-alive connections to gw on 127.0.0.1.
 *
 *   bun run bench/load/agents.ts
 *
 * Prints `{"ready":0,"pid":…}`; `{"cmd":"run", …spec}` (LoadSpec below) runs the load and answers with
 * its figures (LoadResult). Two kinds of traffic, both paced from the same start instant t0 (this
 * process's clock, lib/child-protocol.ts `now`):
 * - agents: each agent repeats, every `periodMs` (staggered over the agents; a loop that starts late
 *   starts at once, and its lateness is recorded): GET /messages/unread?limit=…; GET /messages/context
 *   around one message of the page (seeded pick; with an empty page, around the last message it was
 *   given, if any); POST /messages/mark_read with the page's ids (skipped for an empty page).
 * - sends: open loop, send k at t0 + k × 1000 / sendRps to channel k mod channels, each with its own
 *   Idempotency-Key and text `<prefix><k>`, not waiting for earlier ones.
 * A request "fails" when its status is not 2xx (any status: the load is meant to stay inside the rate
 * limit, and no 404 is expected in this mix) or when fetch throws (socket error, or no answer within
 * `timeoutMs`). Latency is fetch() → body read, in ms.
 */
import { emit, now, serveCommands } from "../lib/child-protocol.ts";
import { type Dist, dist, mulberry32 } from "../lib/stats.ts";

export interface LoadSpec {
  port: number;
  token: string;
  /** Start instant, on this process's clock. */
  t0: number;
  durationMs: number;
  agents: string[];
  periodMs: number;
  limit: number;
  contextBefore: number;
  contextAfter: number;
  sendRps: number;
  /** gw channel ids, in send order. */
  sendChannels: string[];
  sendPrefix: string;
  keyPrefix: string;
  timeoutMs: number;
  seed: number;
}

/**
 * One send: [k, channel id, text, HTTP status (0: socket error), latency ms, message id or error code,
 * start instant on this process's clock].
 */
export type SendRecord = [
  k: number,
  channel: string,
  text: string,
  status: number,
  ms: number,
  result: string,
  startAt: number,
];

export interface RouteFigures {
  n: number;
  ok: number;
  /** Status → count for non-2xx answers. */
  statuses: Record<string, number>;
  socketErrors: number;
  latency: Dist;
}

export interface LoadResult {
  wallMs: number;
  routes: Record<string, RouteFigures>;
  overall: RouteFigures;
  /** The agents' three routes together (unread, context, mark_read). */
  reads: RouteFigures;
  /** Completed requests per whole second since t0. */
  perSecond: number[];
  /** Latencies of the requests completed in each whole second since t0, ms (0.01 ms). */
  bySecond: number[][];
  loops: { n: number; emptyPages: number; lateOverPeriod: number; lateMs: Dist; messagesRead: number };
  sends: SendRecord[];
  errorSamples: string[];
}

const ROUTES = [
  "GET /messages/unread",
  "GET /messages/context",
  "POST /messages/mark_read",
  "POST /messages/send (iMessage)",
  "POST /messages/send (Discord)",
] as const;
type Route = (typeof ROUTES)[number];

async function run(spec: LoadSpec): Promise<LoadResult> {
  const base = `http://127.0.0.1:${spec.port}`;
  const end = spec.t0 + spec.durationMs;
  const random = mulberry32(spec.seed);
  const lat = new Map<Route, number[]>(ROUTES.map((r) => [r, []]));
  const statuses = new Map<Route, Record<string, number>>(ROUTES.map((r) => [r, {}]));
  const socket = new Map<Route, number>(ROUTES.map((r) => [r, 0]));
  const perSecond: number[] = [];
  const bySecond: number[][] = [];
  const errorSamples: string[] = [];

  /** One request; returns the status and parsed body, or null after a socket error. */
  const request = async (
    route: Route,
    url: string,
    init: RequestInit,
  ): Promise<
    | { status: number; body: unknown; ms: number; t: number }
    | { status: 0; error: string; ms: number; t: number }
  > => {
    const t = now();
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(spec.timeoutMs) });
      const text = await res.text();
      const done = now();
      const ms = done - t;
      (lat.get(route) as number[]).push(ms);
      const sec = Math.floor((done - spec.t0) / 1000);
      perSecond[sec] = (perSecond[sec] ?? 0) + 1;
      if (sec >= 0) {
        bySecond[sec] ??= [];
        bySecond[sec].push(ms);
      }
      if (res.status < 200 || res.status > 299) {
        const s = statuses.get(route) as Record<string, number>;
        s[res.status] = (s[res.status] ?? 0) + 1;
        if (errorSamples.length < 20) errorSamples.push(`${route} ${res.status} ${text.slice(0, 300)}`);
      }
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {}
      return { status: res.status, body, ms, t };
    } catch (err) {
      socket.set(route, (socket.get(route) ?? 0) + 1);
      if (errorSamples.length < 20) errorSamples.push(`${route} socket: ${String(err)}`);
      return { status: 0, error: String(err), ms: now() - t, t };
    }
  };

  const auth = { authorization: `Bearer ${spec.token}` };
  const loopLate: number[] = [];
  let loops = 0;
  let emptyPages = 0;
  let lateOverPeriod = 0;
  let messagesRead = 0;

  const agent = async (name: string, index: number) => {
    const headers = { ...auth, "x-agent-id": name };
    const first = spec.t0 + (index * spec.periodMs) / spec.agents.length;
    let last: { id: string; channel_id: string } | null = null;
    for (let i = 0; ; i++) {
      const due = first + i * spec.periodMs;
      if (due >= end) return;
      const wait = due - now();
      if (wait > 0) await Bun.sleep(wait);
      const late = now() - due;
      loopLate.push(late);
      if (late > spec.periodMs) lateOverPeriod++;
      loops++;
      const u = await request("GET /messages/unread", `${base}/messages/unread?limit=${spec.limit}`, {
        headers,
      });
      const page =
        u.status === 200
          ? ((u as { body: { messages: { id: string; channel_id: string }[] } }).body.messages ?? [])
          : [];
      if (page.length === 0) emptyPages++;
      const target = page.length > 0 ? (page[Math.floor(random() * page.length)] ?? null) : last;
      if (page.length > 0) last = page[page.length - 1] ?? null;
      if (target) {
        const qs = new URLSearchParams({
          channel_id: target.channel_id,
          around_message_id: target.id,
          before: String(spec.contextBefore),
          after: String(spec.contextAfter),
        });
        await request("GET /messages/context", `${base}/messages/context?${qs}`, { headers });
      }
      if (page.length > 0) {
        const m = await request("POST /messages/mark_read", `${base}/messages/mark_read`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ message_ids: page.map((p) => p.id) }),
        });
        if (m.status === 200) messagesRead += page.length;
      }
    }
  };

  const sends: SendRecord[] = [];
  const inFlight: Promise<void>[] = [];
  const sender = async () => {
    if (spec.sendRps <= 0 || spec.sendChannels.length === 0) return;
    const gap = 1000 / spec.sendRps;
    for (let k = 0; ; k++) {
      const due = spec.t0 + k * gap;
      if (due >= end) return;
      const wait = due - now();
      if (wait > 0) await Bun.sleep(wait);
      const channel = spec.sendChannels[k % spec.sendChannels.length] as string;
      const text = `${spec.sendPrefix}${k}`;
      const route: Route = channel.startsWith("community_chat:")
        ? "POST /messages/send (Discord)"
        : "POST /messages/send (iMessage)";
      inFlight.push(
        request(route, `${base}/messages/send`, {
          method: "POST",
          headers: {
            ...auth,
            "content-type": "application/json",
            "idempotency-key": `${spec.keyPrefix}${k}`,
          },
          body: JSON.stringify({ channel_id: channel, text }),
        }).then((r) => {
          const body = "body" in r ? (r.body as Record<string, unknown> | null) : null;
          const result =
            r.status === 200
              ? String(body?.message_id ?? "")
              : r.status === 0
                ? "error" in r
                  ? r.error
                  : "socket"
                : String((body?.error as { code?: string } | undefined)?.code ?? r.status);
          sends.push([k, channel, text, r.status, Math.round(r.ms * 1000) / 1000, result, r.t]);
        }),
      );
    }
  };

  await Promise.all([...spec.agents.map((a, i) => agent(a, i)), sender()]);
  await Promise.all(inFlight);

  const figures = (routes: readonly Route[]): RouteFigures => {
    const all = routes.flatMap((r) => lat.get(r) as number[]);
    const st: Record<string, number> = {};
    for (const r of routes)
      for (const [s, n] of Object.entries(statuses.get(r) as Record<string, number>))
        st[s] = (st[s] ?? 0) + n;
    const bad = Object.values(st).reduce((a, b) => a + b, 0);
    const sock = routes.reduce((a, r) => a + (socket.get(r) ?? 0), 0);
    return {
      n: all.length + sock,
      ok: all.length - bad,
      statuses: st,
      socketErrors: sock,
      latency: dist(all),
    };
  };
  const routes = Object.fromEntries(ROUTES.map((r) => [r, figures([r])]));
  return {
    wallMs: now() - spec.t0,
    routes,
    overall: figures(ROUTES),
    reads: figures(ROUTES.slice(0, 3)),
    perSecond: Array.from(perSecond, (x) => x ?? 0),
    bySecond: Array.from(bySecond, (xs) => (xs ?? []).map((x) => Math.round(x * 100) / 100)),
    loops: { n: loops, emptyPages, lateOverPeriod, lateMs: dist(loopLate), messagesRead },
    sends: sends.sort((a, b) => a[0] - b[0]),
    errorSamples,
  };
}

emit({ ready: 0, pid: process.pid });
await serveCommands(
  () => {},
  async (c) => {
    if (c.cmd === "run") return { result: await run(c.spec as LoadSpec) };
    return { error: `unknown command ${c.cmd}` };
  },
);
