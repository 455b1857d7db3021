/**
 * Authentication and the order of checks on every route (spec Authentication, issue: bearer first,
 * then X-Agent-ID, then validation), the health route, unknown routes, and headers every response
 * must (not) carry.
 */
import { describe, expect, test } from "bun:test";
import { recordingConnector } from "../fakes/recording-connector.ts";
import { AGENT, AUTH, inbound, TOKEN, testService } from "../helpers/service.ts";

const t = await testService();

const ROUTES: [string, string, unknown][] = [
  ["GET", "/messages/unread?limit=0", undefined],
  ["GET", "/messages/msg_01ARZ3NDEKTSV4RRFFQ69G5FAV", undefined],
  ["GET", "/messages/context?channel_id=x&around_message_id=bad&before=99", undefined],
  ["POST", "/messages/mark_read", "{not json"],
  ["POST", "/messages/send", "{not json"],
  ["GET", "/messages/quarantine?limit=-1", undefined],
  ["GET", "/attachments/att_bad", undefined],
  ["GET", "/openapi.json", undefined],
  ["GET", "/docs", undefined],
  ["GET", "/redoc", undefined],
  ["POST", "/typing", "{}"],
  ["GET", "/nope", undefined],
];

async function errorOf(res: Response) {
  const body = (await res.json()) as {
    error: { code: string; message: string; details: Record<string, unknown> };
  };
  return { status: res.status, ...body.error };
}

describe("bearer first", () => {
  test.each(ROUTES)("%s %s without a token is 401 even with a bad request", async (method, path, raw) => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: TOKEN },
      { authorization: "Bearer " },
    ];
    for (const headers of variants) {
      const res = await t.request(method, path, { headers, raw: raw as string | undefined });
      expect(await errorOf(res)).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    }
  });

  test("the token is never accepted from the query string", async () => {
    const res = await t.request("GET", `/messages/quarantine?access_token=${TOKEN}`);
    expect(res.status).toBe(401);
  });
});

describe("then X-Agent-ID on per-agent routes", () => {
  test.each([
    ["GET", "/messages/unread?limit=0", undefined],
    ["GET", "/messages/not-an-id", undefined],
    ["GET", "/messages/context?before=99", undefined],
    ["POST", "/messages/mark_read", "{not json"],
    ["GET", "/messages/unread/", undefined],
    ["POST", "/messages/mark_read/", "{}"],
  ])("%s %s without X-Agent-ID is 400 AGENT_ID_REQUIRED before validation", async (method, path, raw) => {
    const variants: Record<string, string>[] = [{}, { "x-agent-id": "" }, { "x-agent-id": "   " }];
    for (const extra of variants) {
      const res = await t.request(method, path, { headers: { ...AUTH, ...extra }, raw });
      expect(await errorOf(res)).toMatchObject({
        status: 400,
        code: "AGENT_ID_REQUIRED",
        details: { field: "X-Agent-ID" },
      });
    }
  });

  test("HEAD of a per-agent route without X-Agent-ID is 400 too", async () => {
    expect((await t.request("HEAD", "/messages/unread", { headers: AUTH })).status).toBe(400);
    const ok = await t.request("HEAD", "/messages/unread", { headers: AGENT });
    expect(ok.status).toBe(200);
  });

  test.each([
    ["GET", "/messages/quarantine"],
    ["GET", "/openapi.json"],
  ])("%s %s needs only the bearer", async (method, path) => {
    expect((await t.request(method, path, { headers: AUTH })).status).toBe(200);
  });

  test("send needs only the bearer (its own errors follow)", async () => {
    const res = await t.request("POST", "/messages/send", {
      headers: AUTH,
      body: { channel_id: "+15555550100", text: "x" },
    });
    expect(await errorOf(res)).toMatchObject({ status: 404, code: "CHANNEL_NOT_FOUND" });
  });
});

describe("other routes", () => {
  test("POST /typing is not available", async () => {
    const res = await t.request("POST", "/typing", { headers: AUTH, body: {} });
    expect(await errorOf(res)).toMatchObject({ status: 404, code: "NOT_FOUND" });
  });

  test("an unknown method on a known path is a 404 envelope", async () => {
    const res = await t.request("DELETE", "/messages/unread", { headers: AGENT });
    expect(await errorOf(res)).toMatchObject({ status: 404, code: "NOT_FOUND" });
  });

  test("no response carries CORS headers, also for a preflight", async () => {
    for (const [method, path] of [
      ...ROUTES.map(([m, p]) => [m, p] as const),
      ["OPTIONS", "/messages/unread"] as const,
    ]) {
      const res = await t.request(method, path, { headers: { ...AGENT, origin: "https://evil.example" } });
      for (const [name] of res.headers) expect(name.startsWith("access-control-")).toBe(false);
    }
  });
});

describe("/healthz", () => {
  test("answers without a bearer with the decided shape and the queue depth from the store", async () => {
    const h = await testService({
      env: { GW_WEBHOOK_URL: "http://127.0.0.1:9/hook", GW_WEBHOOK_SECRET: "s3cret-s3cret" },
    });
    h.seed([inbound(), inbound({ sender: { id: "+15555550999", displayName: "stranger" } })]);
    h.clock.advance(61_000);
    const res = await h.request("GET", "/healthz");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: "ok",
      version: expect.any(String),
      uptime_s: 61,
      connectors: {
        device_messenger: { state: "ok", detail: "" },
        community_chat: { state: "ok", detail: "" },
      },
      webhooks: { queue_depth: 1, dead: 0 },
    });
  });

  test("is degraded when an enabled connector is not ok; disabled ones do not count", async () => {
    const sick = {
      ...recordingConnector("device_messenger"),
      health: () => ({ state: "error" as const, detail: "No Full Disk Access." }),
    };
    const h = await testService({ connectors: { device_messenger: sick } });
    const body = (await (await h.request("GET", "/healthz")).json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      status: "degraded",
      connectors: {
        device_messenger: { state: "error", detail: "No Full Disk Access." },
        community_chat: { state: "disabled" },
      },
    });
  });
});

describe("unexpected failures", () => {
  test("an unhandled exception is 500 INTERNAL_ERROR with no stack trace, and is logged", async () => {
    const h = await testService();
    h.svc.store.db.run("DROP TABLE read_runs");
    const res = await h.request("GET", "/messages/unread", { headers: AGENT });
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({
      error: { code: "INTERNAL_ERROR", message: "Internal error.", details: {} },
    });
    expect(body).not.toContain("read_runs");
    expect(h.log.entries.some((e) => e.level === "error" && e.msg === "unhandled error")).toBe(true);
  });
});
