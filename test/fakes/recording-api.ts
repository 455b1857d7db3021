/**
 * A recording stand-in for the gw HTTP API, for `gw mcp` tests: records every request (method, path,
 * query, headers, body) and answers with the status and JSON the test programs.
 */
import type { RecordedRequest } from "../../src/demo/fake-discord/rest.ts";

/** A request as the fake Discord records one (method, path, query, headers, body), without its time. */
export type Recorded = Omit<RecordedRequest, "at">;

export function recordingApi(
  answer: (r: Recorded) => { status: number; body: unknown } = () => ({ status: 200, body: {} }),
) {
  const requests: Recorded[] = [];
  let respond = answer;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const url = new URL(req.url);
      const text = await req.text();
      const r: Recorded = {
        method: req.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(req.headers),
        body: text ? JSON.parse(text) : undefined,
      };
      requests.push(r);
      const out = respond(r);
      return Response.json(out.body, { status: out.status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    answer: (fn: typeof answer) => {
      respond = fn;
    },
    stop: () => server.stop(true),
  };
}
