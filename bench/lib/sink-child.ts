/**
 * Child process of bench/webhooks/webhooks.ts: the webhook sink, a bare Bun.serve on 127.0.0.1 (port 0).
 *
 *   BENCH_SECRET=<secret> bun run bench/lib/sink-child.ts
 *
 * POST (any path): takes the arrival time at handler entry (timeOrigin + performance.now(), wall clock with
 * sub-millisecond resolution), reads the body, checks X-GW-Signature against BENCH_SECRET and answers 204.
 * It records per delivery id (X-GW-Delivery-ID): arrival time, body bytes, signature ok. A repeated id is
 * counted as a duplicate and keeps its first arrival.
 *   GET  /count  {"n","dupes","bad"}               cheap progress probe
 *   GET  /stats  {"n","dupes","bad","records":[[id, t, bytes], …]}
 *   GET  /now    {"t"}                             clock calibration (the parent pings it)
 *   GET  /cpu    {"userUs","systemUs"}             this process's CPU time
 *   POST /reset                                    forget every record
 * Prints one line `{"ready":<port>}` on stdout. Exits when stdin closes (the parent ended) or on SIGTERM.
 */
import { verifyGwSignature } from "../../src/webhooks/sign.ts";

const now = (): number => performance.timeOrigin + performance.now();
const secret = process.env.BENCH_SECRET ?? "";
if (!secret) {
  process.stderr.write("BENCH_SECRET is required\n");
  process.exit(2);
}

type Rec = [id: string, t: number, bytes: number];
let records = new Map<string, Rec>();
let dupes = 0;
let bad = 0;

const json = (obj: unknown) => Response.json(obj);

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  reusePort: false,
  async fetch(req) {
    const t = now();
    if (req.method === "POST") {
      const url = new URL(req.url);
      if (url.pathname === "/reset") {
        records = new Map();
        dupes = 0;
        bad = 0;
        return new Response(null, { status: 204 });
      }
      const id = req.headers.get("x-gw-delivery-id") ?? "";
      const body = new Uint8Array(await req.arrayBuffer());
      if (!verifyGwSignature(secret, body, req.headers.get("x-gw-signature")) || !id) bad += 1;
      if (records.has(id)) dupes += 1;
      else records.set(id, [id, t, body.byteLength]);
      return new Response(null, { status: 204 });
    }
    const path = new URL(req.url).pathname;
    if (path === "/now") return json({ t: now() });
    if (path === "/count") return json({ n: records.size, dupes, bad });
    if (path === "/stats") return json({ n: records.size, dupes, bad, records: [...records.values()] });
    if (path === "/cpu") {
      const c = process.cpuUsage();
      return json({ userUs: c.user, systemUs: c.system });
    }
    return new Response("not found", { status: 404 });
  },
});

process.stdout.write(`${JSON.stringify({ ready: server.port })}\n`);

const stop = () => {
  server.stop(true);
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// Reading stdin keeps the process tied to the parent: EOF means the parent is gone.
for await (const _ of Bun.stdin.stream()) {
  // ignore input
}
stop();
