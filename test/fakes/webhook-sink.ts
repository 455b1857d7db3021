/**
 * A local webhook receiver for tests: records every request (headers, raw body, arrival time) and
 * answers what the test programs — a status per call, a hang past the sender's timeout, or a redirect.
 * It also tracks how many requests are open at once.
 */
export type SinkReply = number | "hang" | { redirect: string };

export interface SinkHit {
  at: number;
  headers: Record<string, string>;
  body: string;
}

export function webhookSink(replies: (n: number, hit: SinkHit) => SinkReply = () => 204) {
  const hits: SinkHit[] = [];
  let open = 0;
  let maxOpen = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 30,
    async fetch(req) {
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      try {
        const hit = { at: Date.now(), headers: Object.fromEntries(req.headers), body: await req.text() };
        hits.push(hit);
        const reply = replies(hits.length, hit);
        if (reply === "hang") {
          // Holds the request until the sender gives up (its abort closes the connection) or 5 s pass.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 5_000);
            req.signal.addEventListener("abort", () => {
              clearTimeout(timer);
              resolve();
            });
          });
          return new Response(null, { status: 204 });
        }
        if (typeof reply === "object")
          return new Response(null, { status: 302, headers: { location: reply.redirect } });
        return new Response(null, { status: reply });
      } finally {
        open -= 1;
      }
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/webhook`,
    hits,
    maxOpen: () => maxOpen,
    stop: () => server.stop(true),
  };
}
