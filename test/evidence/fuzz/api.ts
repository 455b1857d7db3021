/**
 * Properties over every route of the service, driven through `app.handle` (the real app, routes,
 * store and error mapper; recording connectors): any hostile request gets no 5xx, every non-2xx answer
 * is the error envelope with a documented code and a status of that code, a request without the right
 * bearer is 401 on every route but GET /healthz, and the bearer corpus of reliability.md B7 is 401
 * everywhere.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { pathOf } from "../../../src/core/http-edge.ts";
import { createIdFactory } from "../../../src/core/ids.ts";
import { answerProblem } from "./envelope.ts";
import { type ApiService, DM, withApiService } from "./harness.ts";
import {
  bearerVariants,
  describe,
  GOOD_BEARER,
  isGoodBearer,
  type RequestSpec,
  requestArb,
  toRequest,
} from "./requests.ts";
import { checkProperty, type FuzzItem, merge, type Outcome } from "./types.ts";

/**
 * Sends one spec through `handle` and returns the problem with its answer, or null. In process, the
 * request is aborted after `abortMs` (a held long poll then ends with the empty page; 0: never).
 * `handle` answers null for a request gw never answered (counted by the caller).
 */
export async function tryRequest(
  handle: (r: Request) => Promise<Response | null>,
  base: string,
  spec: RequestSpec,
  stats: Map<number, number>,
  abortMs = 50,
  /** The path gw receives for a request URL (over the wire, the client's rewriting of it). */
  pathSent: (url: string) => string = pathOf,
): Promise<string | null> {
  const req = toRequest(base, spec, abortMs > 0 ? AbortSignal.timeout(abortMs) : undefined);
  if (!req) {
    stats.set(0, (stats.get(0) ?? 0) + 1);
    return null;
  }
  let res: Response | null;
  try {
    res = await handle(req);
  } catch (err) {
    return `the handler threw ${String(err)} for ${describe(spec)}`;
  }
  if (res === null) return null;
  const text = await res.text();
  stats.set(res.status, (stats.get(res.status) ?? 0) + 1);
  const problem = answerProblem(res.status, res.headers, text, spec.method.toUpperCase());
  if (problem) return `${problem} — for ${describe(spec)}`;
  const auth = spec.headers.filter(([k]) => k === "authorization").map(([, v]) => v);
  const open = spec.method.toUpperCase() === "GET" && pathSent(req.url) === "/healthz";
  if (!open && !isGoodBearer(auth) && res.status !== 401)
    return `status ${res.status} without the right bearer — for ${describe(spec)}`;
  return null;
}

export function statsNote(label: string, stats: Map<number, number>): string {
  const parts = [...stats.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s === 0 ? "unbuildable" : s} ×${n}`);
  return `${label}: ${parts.join(", ")}`;
}

const withService = <T>(fn: (s: ApiService) => Promise<T>): Promise<T> =>
  withApiService({ GW_RATE_LIMIT_BURST: "1000000", GW_ATTACHMENT_MAX_BYTES: "1000" }, fn);

function seedFiles(home: string, attachmentDir: string): void {
  writeFileSync(join(home, "ok.txt"), "fine");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh/id_ed25519"), "CANARY-SSH-KEY");
  mkdirSync(attachmentDir, { recursive: true });
}

export const apiRoutesProperty: FuzzItem = {
  id: "api-routes",
  tried:
    "Hostile requests to every service route through app.handle: random methods, paths and ids, query strings (broken %-escapes included), bearer absent/wrong/duplicated, X-Agent-ID, Idempotency-Key, Content-Type, lying Content-Length, bodies (arbitrary JSON, near-valid schema bodies, raw text, invalid UTF-8, empty, nested 20,000 deep, over 1 MiB)",
  held: "no 5xx; every non-2xx is {error:{code,message,details}} with a documented code and a status of that code; no CORS header; without the right bearer 401 on every route but GET /healthz",
  async run({ scale, seed }): Promise<Outcome> {
    return withService(async (s) => {
      seedFiles(s.dir, s.config.attachmentDir);
      const attachmentId = createIdFactory(s.clock).attachment();
      writeFileSync(join(s.config.attachmentDir, attachmentId), "PNG");
      s.svc.ingest({
        source: "device_messenger",
        messages: [
          {
            source: "device_messenger",
            platformId: "with-attachment",
            channel: { id: DM, type: "dm", platformRef: `any;-;${DM}` },
            sender: { id: DM, displayName: DM },
            service: "iMessage",
            text: "",
            replyToPlatformId: null,
            timestampMs: Date.UTC(2026, 0, 2),
            attachments: [
              {
                id: attachmentId,
                mime: "image/png",
                sizeBytes: 3,
                fileName: attachmentId,
                platformRef: null,
              },
            ],
            raw: {},
            direction: "inbound",
          },
        ],
        cursor: null,
      });
      const stats = new Map<number, number>();
      const arb = requestArb({ ids: s.ids, attachmentId, homeDir: s.dir });
      const out = await checkProperty(
        fc.asyncProperty(arb, async (spec) => {
          s.clock.advance(1_000);
          const problem = await tryRequest(s.handle, "http://localhost", spec, stats);
          if (problem) throw new Error(problem);
        }),
        300 * scale,
        seed,
      );
      return { ...out, notes: [statsNote("answers", stats)] };
    });
  },
};

const ROUTES = [
  "GET /messages/unread",
  "GET /messages/quarantine",
  "GET /messages/context?channel_id=x&around_message_id=y",
  "POST /messages/mark_read",
  "POST /messages/send",
  "GET /messages/msg_00000000000000000000000000",
  "GET /attachments/att_00000000000000000000000000",
  "GET /openapi.json",
  "GET /docs",
  "GET /redoc",
  "HEAD /healthz",
  "POST /healthz",
  "GET /typing",
];

export const bearerCorpus: FuzzItem = {
  id: "bearer-corpus",
  tried: `Bearer corpus (B7: empty, short, long, off by one byte, wrong case, extra spaces, tab, quotes, other schemes, duplicated headers) on ${ROUTES.length} routes`,
  held: "100 % 401 UNAUTHORIZED with the envelope; the right bearer (any scheme case) passes",
  async run(): Promise<Outcome> {
    return withService(async (s) => {
      const failures: string[] = [];
      let cases = 0;
      const wrong = bearerVariants().filter((v) => !isGoodBearer([v]));
      const sets: string[][] = [
        [],
        ...wrong.map((v) => [v]),
        [GOOD_BEARER, GOOD_BEARER],
        [GOOD_BEARER, "Bearer wrong"],
        ["Bearer wrong", GOOD_BEARER],
      ];
      for (const route of ROUTES) {
        const [method, path] = route.split(" ") as [string, string];
        for (const values of sets) {
          cases++;
          const headers = new Headers({ "x-agent-id": "agent-a", "content-type": "application/json" });
          for (const v of values) headers.append("authorization", v);
          const res = await s.handle(
            new Request(`http://localhost${path}`, {
              method,
              headers,
              ...(method === "POST" ? { body: "{}" } : {}),
            }),
          );
          const text = await res.text();
          const problem = answerProblem(res.status, res.headers, text, method);
          if (problem || res.status !== 401 || (method !== "HEAD" && !text.includes('"UNAUTHORIZED"')))
            failures.push(
              `${route} with ${JSON.stringify(values.map((v) => v.slice(0, 60)))}: ${res.status} ${problem ?? text.slice(0, 120)}`,
            );
        }
        cases++;
        const res = await s.handle(
          new Request(`http://localhost${path}`, {
            method,
            headers: {
              authorization: `bearer ${s.config.bearerToken}`,
              "x-agent-id": "agent-a",
              "content-type": "application/json",
            },
            ...(method === "POST" ? { body: "{}" } : {}),
          }),
        );
        if (res.status === 401) failures.push(`${route}: the right bearer was refused`);
        await res.arrayBuffer();
      }
      return { cases, failures };
    });
  },
};

export const apiItems = [apiRoutesProperty, bearerCorpus];
export { merge };
