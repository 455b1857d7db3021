/**
 * Fallback load generator of bench/api/api.ts, used when `wrk` is not installed (or BENCH_LOADGEN=bun):
 * `connections` concurrent closed loops of fetch() against one URL for `seconds`, rotating the
 * X-Agent-ID header over the agents. Runs in its own process so it does not share the server's event
 * loop. Prints one JSON line: requests, non-2xx, errors, bytes, latency percentiles (ms).
 *
 *   bun run bench/api/load.ts '{"url":"http://127.0.0.1:8080/messages/unread?limit=20","connections":32,
 *     "seconds":20,"token":"…","agents":["agent-0","agent-1"]}'
 */

import { percentile } from "../lib/stats.ts";

interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  token: string;
  agents: string[];
}

const spec = JSON.parse(process.argv[2] ?? "{}") as LoadSpec;
if (!spec.url?.startsWith("http://127.0.0.1:")) throw new Error("api-load only targets 127.0.0.1");

let latencies = new Float64Array(1 << 16);
let n = 0;
let sent = 0;
let non2xx = 0;
let errors = 0;
let bytes = 0;
const started = performance.now();
const deadline = started + spec.seconds * 1000;

async function loop(): Promise<void> {
  while (performance.now() < deadline) {
    const agent = spec.agents[sent++ % spec.agents.length] ?? "agent-0";
    const t0 = performance.now();
    try {
      const res = await fetch(spec.url, {
        headers: { authorization: `Bearer ${spec.token}`, "x-agent-id": agent },
      });
      const body = await res.arrayBuffer();
      bytes += body.byteLength;
      if (res.status < 200 || res.status >= 400) non2xx++;
    } catch {
      errors++;
      continue;
    }
    if (n === latencies.length) {
      const bigger = new Float64Array(latencies.length * 2);
      bigger.set(latencies);
      latencies = bigger;
    }
    latencies[n++] = performance.now() - t0;
  }
}

await Promise.all(Array.from({ length: spec.connections }, loop));
const seconds = (performance.now() - started) / 1000;
const sorted = latencies.subarray(0, n).sort();
console.log(
  JSON.stringify({
    requests: n,
    seconds,
    non2xx,
    errors,
    bytes,
    p50_ms: percentile(sorted, 50),
    p90_ms: percentile(sorted, 90),
    p99_ms: percentile(sorted, 99),
    max_ms: n > 0 ? (sorted[n - 1] ?? Number.NaN) : Number.NaN,
  }),
);
