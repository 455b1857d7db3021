import { expect, test } from "bun:test";
import { createApp } from "../../src/http/app.ts";
import { recordingLogger } from "../helpers/logger.ts";

const TOKEN = "test-token-0123456789abcdef";
let connectors = {
  device_messenger: { state: "ok" as const, detail: "" },
  community_chat: { state: "disabled" as const, detail: "no bot token" },
};
const app = createApp({
  bearerToken: TOKEN,
  log: recordingLogger(),
  health: {
    version: "9.9.9",
    startedAtMs: 1_000,
    now: () => 62_500,
    connectors: () => connectors,
    webhookCounts: () => ({ pending: 3, dead: 1 }),
  },
});
const get = (path: string, headers: Record<string, string> = {}) =>
  app.handle(new Request(`http://localhost${path}`, { headers }));

test("/healthz answers without a bearer with the decided shape", async () => {
  const res = await get("/healthz");
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({
    status: "ok",
    version: "9.9.9",
    uptime_s: 61,
    connectors,
    webhooks: { queue_depth: 3, dead: 1 },
  });
  expect(res.headers.get("access-control-allow-origin")).toBeNull();
});

test("/healthz is degraded when an enabled connector is not ok", async () => {
  connectors = {
    ...connectors,
    device_messenger: { state: "error" as never, detail: "no Full Disk Access" },
  };
  expect(((await (await get("/healthz")).json()) as { status: string }).status).toBe("degraded");
});

test("every other route needs the bearer: 401 with the error envelope", async () => {
  for (const path of ["/messages/unread", "/openapi.json", "/nope"]) {
    const res = await get(path);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { code: "UNAUTHORIZED", message: "Missing or invalid bearer token.", details: {} },
    });
  }
  const wrong = await get("/nope", { authorization: `Bearer ${TOKEN}x` });
  expect(wrong.status).toBe(401);
});

test("an unknown route with the bearer is a 404 envelope", async () => {
  const res = await get("/nope", { authorization: `Bearer ${TOKEN}` });
  expect(res.status).toBe(404);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
});
