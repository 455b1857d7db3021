/**
 * Bad input over the wire, against a real `gw serve` process (from source, its own folder and port):
 * - the hostile requests of requests.ts sent over real HTTP with fetch, several at a time: no 5xx,
 *   every non-2xx the error envelope with a documented code, 401 without the right bearer;
 * - a corpus of malformed HTTP written on raw TCP sockets (garbage request lines, HTTP/0.9 and 9.9,
 *   invalid UTF-8 and NUL bytes, 100 KB headers and URLs, thousands of headers, negative, doubled and
 *   lying Content-Lengths, smuggling shapes, bad chunk sizes, bodies cut off, pipelining, bare LFs,
 *   upgrades): each is answered with a status below 500 or closed, and whatever reaches the app is the
 *   envelope.
 * After each part the process must still be running, answer /healthz 200 and an agent's unread 200,
 * and have logged no fatal line.
 */
import { connect } from "node:net";
import fc from "fast-check";
import { pathOf } from "../../../src/core/http-edge.ts";
import { type Gw, startGw, workDir } from "../faults/harness.ts";
import { statsNote, tryRequest } from "./api.ts";
import { answerProblem } from "./envelope.ts";
import { TOKEN } from "./harness.ts";
import { type RequestSpec, requestArb } from "./requests.ts";
import { checkProperty, type FuzzItem, merge, type Outcome } from "./types.ts";

/**
 * The path Bun's fetch puts on the wire: leading slashes collapsed (`//healthz` goes out as `/healthz`,
 * found by seed 1278922063); a literal `GET //healthz` is the raw corpus's and answers 401.
 */
const fetchedPath = (url: string) => pathOf(url).replace(/^\/{2,}/, "/");

/** Writes `bytes` on a fresh connection, half-closes unless `keepOpen`, and returns what came back. */
function rawExchange(port: number, bytes: Buffer, timeoutMs = 3_000): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port });
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString("latin1"));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on("connect", () => {
      socket.write(bytes);
      socket.end();
    });
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("close", finish);
    socket.on("error", finish);
  });
}

const auth = `Authorization: Bearer ${TOKEN}\r\nX-Agent-ID: agent-a\r\n`;
const b = (s: string) => Buffer.from(s, "latin1");

/** Names a corpus entry sent without a bearer to a route that needs one: its answer must be 401. */
const NO_BEARER = "no bearer: ";

/** Malformed HTTP/1.1 as bytes: [name, bytes]. */
export function rawCorpus(): [string, Buffer][] {
  const big = "a".repeat(100_000);
  return [
    ["empty connection", b("")],
    ["garbage request line", b("GARBAGE\r\n\r\n")],
    ["binary noise", Buffer.from(Array.from({ length: 512 }, (_, i) => (i * 131 + 7) % 256))],
    ["no Host header", b("GET /healthz HTTP/1.1\r\n\r\n")],
    [`${NO_BEARER}the open route behind a double slash`, b("GET //healthz HTTP/1.1\r\nHost: x\r\n\r\n")],
    ["HTTP/9.9", b("GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n")],
    ["HTTP/0.9 request line", b("GET /healthz\r\n\r\n")],
    ["lower-case method", b(`get /messages/unread HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)],
    [
      "invalid UTF-8 in the path",
      Buffer.concat([
        b("GET /messages/"),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
        b(` HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
      ]),
    ],
    ["NUL in the path", b(`GET /messages/unread\0x HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)],
    [
      "NUL in a header value",
      b(
        `GET /messages/unread HTTP/1.1\r\nHost: x\r\nX-Agent-ID: a\0b\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`,
      ),
    ],
    [
      "invalid UTF-8 in X-Agent-ID",
      Buffer.concat([
        b(`GET /messages/unread HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\nX-Agent-ID: `),
        Buffer.from([0xc3, 0x28, 0xff]),
        b("\r\n\r\n"),
      ]),
    ],
    ["header line without a colon", b(`GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n`)],
    [
      "obsolete header folding",
      b(
        `GET /messages/unread HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer\r\n ${TOKEN}\r\nX-Agent-ID: a\r\n\r\n`,
      ),
    ],
    [
      "bare LF line endings",
      b(`GET /messages/unread HTTP/1.1\nHost: x\nAuthorization: Bearer ${TOKEN}\nX-Agent-ID: a\n\n`),
    ],
    ["a 100 KB header value", b(`GET /messages/unread HTTP/1.1\r\nHost: x\r\n${auth}X-Big: ${big}\r\n\r\n`)],
    ["a 100 KB URL", b(`GET /messages/unread?channel_id=${big} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`)],
    [
      "2,000 headers",
      b(
        `GET /messages/unread HTTP/1.1\r\nHost: x\r\n${auth}${Array.from({ length: 2000 }, (_, i) => `X-H${i}: v\r\n`).join("")}\r\n`,
      ),
    ],
    [
      "Content-Length: -1",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`,
      ),
    ],
    [
      "Content-Length: 1e3",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 1e3\r\n\r\n{}`,
      ),
    ],
    [
      "two different Content-Lengths",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}`,
      ),
    ],
    [
      "Content-Length 2^64",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 18446744073709551616\r\n\r\n{}`,
      ),
    ],
    [
      "Content-Length over 1 MiB, no bearer",
      b(
        "POST /messages/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n{",
      ),
    ],
    [
      "body cut off (Content-Length 100, 10 bytes sent)",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"message_`,
      ),
    ],
    ["request cut off in the request line", b("GET /messa")],
    ["request cut off in the headers", b(`GET /messages/unread HTTP/1.1\r\nHost: x\r\nAuthoriza`)],
    [
      "Content-Length and Transfer-Encoding (CL.TE)",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /messages/unread HTTP/1.1\r\nHost: x\r\n\r\n`,
      ),
    ],
    [
      "Transfer-Encoding: gzip, chunked",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
      ),
    ],
    [
      "chunk size that is not hex",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
    ],
    [
      "chunk size of 2^64",
      b(
        `POST /messages/mark_read HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n`,
      ),
    ],
    [
      "Expect: 100-continue with 50 MB announced",
      b(
        `POST /messages/send HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 50000000\r\n\r\n`,
      ),
    ],
    [
      "absolute-form URI to another host",
      b("GET http://evil.example/healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
    ],
    ["CONNECT", b("CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")],
    ["OPTIONS *", b("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")],
    [
      "path traversal in the request target",
      b(`GET /attachments/../../../../etc/passwd HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
    ],
    [
      "%2e%2e traversal to an attachment",
      b(`GET /attachments/%2e%2e%2f%2e%2e%2fgw.db HTTP/1.1\r\nHost: x\r\n${auth}\r\n`),
    ],
    [
      "WebSocket upgrade",
      b(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
      ),
    ],
    [
      "h2c upgrade",
      b(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
      ),
    ],
    ["HTTP/2 preface", b("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")],
    ["TLS ClientHello on the plain port", Buffer.from("16030100a5010000a10303", "hex")],
    ["50 pipelined requests", b(`GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(50))],
    [
      "pipelined request then garbage",
      b(`GET /messages/unread HTTP/1.1\r\nHost: x\r\n${auth}\r\n\x00\x01\x02GARBAGE\r\n\r\n`),
    ],
  ];
}

interface RawAnswer {
  status: number;
  headers: Headers;
  body: string;
}

/** The HTTP responses in `text`, pipelined ones included (bodies by Content-Length). */
function responses(text: string): RawAnswer[] {
  const out: RawAnswer[] = [];
  let rest = text;
  for (;;) {
    const m = /^HTTP\/1\.[01] (\d{3})[^\r]*\r\n/.exec(rest);
    const end = rest.indexOf("\r\n\r\n");
    if (!m || end < 0) return out;
    const headers = new Headers();
    for (const line of rest.slice(m[0].length, end).split("\r\n")) {
      const i = line.indexOf(":");
      if (i > 0) headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
    }
    const length = Number(headers.get("content-length") ?? 0);
    out.push({ status: Number(m[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
}

/**
 * Bun's HTTP parser refuses a message it cannot parse before gw sees it: 400, 431 or 505 with no body
 * and no Content-Type. gw's own answers always carry the JSON envelope.
 */
function parserRefusal(status: number, headers: Headers, body: string): boolean {
  return [400, 431, 505].includes(status) && body === "" && !headers.has("content-type");
}

/**
 * Problems with what came back on a raw socket: a 5xx from gw, an app answer that is not the envelope, or
 * a NO_BEARER entry answered anything but 401.
 */
function rawProblem(name: string, answers: RawAnswer[]): string | null {
  if (name.startsWith(NO_BEARER) && answers[0]?.status !== 401)
    return `${name}: answered ${answers[0]?.status ?? "nothing"}, not 401`;
  for (const a of answers) {
    if (parserRefusal(a.status, a.headers, a.body) || a.status < 300) continue;
    const problem = answerProblem(a.status, a.headers, a.body, a.body === "" ? "HEAD" : "GET");
    if (problem) return `${name}: ${problem}`;
  }
  return null;
}

/** The process is up, /healthz and an agent's unread answer 200, and nothing fatal was logged. */
async function stillServing(gw: Gw, after: string): Promise<string[]> {
  const failures: string[] = [];
  if (gw.proc.proc.exitCode !== null || gw.proc.proc.signalCode !== null)
    return [`gw serve exited (${gw.proc.proc.exitCode ?? gw.proc.proc.signalCode}) after ${after}`];
  const health = await gw.health();
  if (health.status !== 200) failures.push(`/healthz answered ${health.status} after ${after}`);
  const unread = await gw.get("/messages/unread");
  if (unread.status !== 200) failures.push(`unread answered ${unread.status} after ${after}`);
  const fatal = gw.logs().filter((l) => l.level >= 60 || /uncaught|unhandled/i.test(l.msg));
  if (fatal.length > 0) failures.push(`logged ${fatal.map((l) => l.msg).join("; ")} after ${after}`);
  return failures;
}

async function withGw<T>(fn: (gw: Gw, dir: string) => Promise<T>): Promise<T> {
  const work = workDir("fuzz-http");
  const gw = await startGw({
    dir: work.dir,
    env: { GW_BEARER_TOKEN: TOKEN, GW_RATE_LIMIT_BURST: "1000000", GW_ATTACHMENT_MAX_BYTES: "1000" },
    allowlist: "",
  });
  try {
    return await fn(gw, work.dir);
  } finally {
    await gw.stop();
    work.remove();
  }
}

/** A held long poll is the one request allowed to outlast the client's patience. */
const LONG_POLL = /(^|&)wait=/;

export const httpRequests: FuzzItem = {
  id: "api-over-http",
  tried:
    "The hostile requests of api-routes sent over real HTTP to a running gw serve (8 at a time), then 41 malformed HTTP/1.1 messages on raw TCP (garbage and HTTP/0.9/9.9 request lines, invalid UTF-8 and NUL bytes, 100 KB headers and URLs, 2,000 headers, negative/doubled/2^64/lying Content-Lengths, CL.TE smuggling, bad chunk sizes, cut-off bodies and headers, Expect: 100-continue for 50 MB, absolute-form, CONNECT, OPTIONS *, traversal targets, WebSocket/h2c upgrades, the HTTP/2 preface, a TLS hello, pipelining)",
  held: "no 5xx; every non-2xx from the app is the error envelope with a documented code; 401 without the right bearer; malformed HTTP answered below 500 or closed; afterwards the process is still up, /healthz and unread answer 200 and nothing fatal is logged",
  async run({ scale, seed }): Promise<Outcome> {
    return withGw(async (gw, dir) => {
      const base = `http://127.0.0.1:${gw.port}`;
      const stats = new Map<number, number>();
      let held = 0;
      let refused = 0;
      // Over the wire a held long poll is left by the client (fetch aborts); anything else must answer.
      const handle = async (req: Request): Promise<Response | null> => {
        const poll = LONG_POLL.test(new URL(req.url).search.slice(1));
        try {
          const res = await fetch(req, { signal: AbortSignal.timeout(poll ? 300 : 10_000) });
          const body = await res.text();
          if (!parserRefusal(res.status, res.headers, body)) return new Response(body, res);
          refused++;
          return null;
        } catch (err) {
          if (poll && (err as Error).name === "TimeoutError") {
            held++;
            return null;
          }
          throw err;
        }
      };
      const ids = {
        allowed: "msg_00000000000000000000000001",
        quarantined: "msg_00000000000000000000000002",
        discordMessage: "msg_00000000000000000000000003",
      };
      const arb = fc.array(requestArb({ ids, homeDir: dir }), { minLength: 8, maxLength: 8 });
      const requests = await checkProperty(
        fc.asyncProperty(arb, async (batch: RequestSpec[]) => {
          const problems = await Promise.all(
            batch.map((spec) => tryRequest(handle, base, spec, stats, 0, fetchedPath)),
          );
          const first = problems.find((p) => p !== null);
          if (first) throw new Error(first);
        }),
        Math.ceil((200 * scale) / 8),
        seed,
      );
      requests.cases *= 8;
      const afterRequests = await stillServing(gw, "the hostile requests");

      const raw: Outcome = { cases: 0, failures: [] };
      const seen = new Map<string, number>();
      // All at once: a message Bun waits on (a cut-off body) is given up after rawExchange's timeout.
      const corpus = rawCorpus();
      const answered = await Promise.all(corpus.map(([, bytes]) => rawExchange(gw.port, bytes)));
      corpus.forEach(([name], i) => {
        raw.cases++;
        const answers = responses(answered[i] as string);
        const first = answers[0];
        const key = !first
          ? "closed"
          : parserRefusal(first.status, first.headers, first.body)
            ? `${first.status} from Bun's parser`
            : String(first.status);
        seen.set(key, (seen.get(key) ?? 0) + 1);
        const problem = rawProblem(name, answers);
        if (problem) raw.failures.push(problem);
      });
      const afterRaw = await stillServing(gw, "the malformed HTTP corpus");
      return merge(requests, raw, {
        cases: 0,
        failures: [...afterRequests, ...afterRaw],
        notes: [
          statsNote("over HTTP, answers", stats),
          `${held} long poll(s) left by the client after 300 ms; ${refused} request(s) refused by Bun's HTTP parser before gw (a control character in a header value)`,
          `malformed HTTP, first answer: ${[...seen.entries()].map(([k, n]) => `${k} ×${n}`).join(", ")}`,
        ],
      });
    });
  },
};

export const httpItems = [httpRequests];
