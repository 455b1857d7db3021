/**
 * The prompt post's Idempotency-Key (permission-relay.ts sendKey): kept while gw serve may not have the
 * request (no answer) and after a 429, a new one after a 5xx answer (the service replays a cached 502 under
 * the old key). Then the relay's tries against a scripted API: the keys each try really sent.
 */
import { describe, expect, test } from "bun:test";
import { authenticated } from "../../src/allowlist/services.ts";
import type { ApiClient, ApiResponse } from "../../src/mcp/api-client.ts";
import { createPermissionRelay, sendKey } from "../../src/mcp/permission-relay.ts";
import { recordingLogger } from "../helpers/logger.ts";

const BASE = "gw-permission:abcde:0123";

describe("sendKey", () => {
  test("the first try uses the base key", () => {
    expect(sendKey(BASE, 0, null)).toBe(BASE);
  });

  test("no answer (status 0: gw serve may not have it) or a 429: the same key again", () => {
    for (const status of [0, 429])
      for (const key of [BASE, `${BASE}:2`]) expect(sendKey(BASE, 3, { key, status })).toBe(key);
  });

  test("any 5xx answer: a new key named by the try", () => {
    for (const status of [500, 502, 503, 504])
      for (const tryNo of [1, 2, 4]) {
        const key = sendKey(BASE, tryNo, { key: BASE, status });
        expect(key).toBe(`${BASE}:${tryNo}`);
        expect(key).not.toBe(BASE);
      }
  });

  test("keys stay unique along a run of failures, and within the 255-character header limit", () => {
    let previous: { key: string; status: number } | null = null;
    const keys: string[] = [];
    for (let tryNo = 0; tryNo < 5; tryNo++) {
      const key = sendKey(BASE, tryNo, previous);
      keys.push(key);
      previous = { key, status: 502 };
    }
    expect(new Set(keys).size).toBe(5);
    expect(Math.max(...keys.map((k) => k.length))).toBeLessThan(255);
  });
});

/** A relay whose sends answer from `answers` in order; records each send's key. */
async function relayWith(answers: ApiResponse[]) {
  const keys: string[] = [];
  const api: ApiClient = {
    async call(_method, path, opts = {}) {
      if (path === "/channels")
        return {
          ok: true,
          status: 200,
          body: { channels: [{ channel_id: "community_chat:dm:1", channel_type: "dm" }] },
        };
      keys.push(opts.idempotencyKey ?? "");
      return answers.shift() ?? { ok: true, status: 200, body: { message_id: "msg_x" } };
    },
  };
  const relay = createPermissionRelay({
    api,
    owner: "ann",
    agentId: "claude-code",
    expiryMs: 600_000,
    now: () => 0,
    sleep: async () => {},
    notify: async () => {},
    log: recordingLogger(),
  });
  await relay.relay({ request_id: "abcde", tool_name: "Bash", description: "d", input_preview: "p" });
  return keys;
}

const failed502: ApiResponse = {
  ok: false,
  status: 502,
  body: { error: { code: "PLATFORM_SEND_FAILED", message: "x", details: {} } },
};
const noAnswer: ApiResponse = { ok: false, status: 0, body: { error: { code: "INTERNAL_ERROR" } } };
const limited: ApiResponse = {
  ok: false,
  status: 429,
  retryAfter: "1",
  body: { error: { code: "RATE_LIMITED", message: "x", details: { retry_after_s: 1 } } },
};

describe("the relay's tries", () => {
  test("after a 502 the next try is a new send under a new key", async () => {
    const [first, second, ...rest] = await relayWith([failed502]);
    expect(rest).toEqual([]);
    expect(first).toMatch(/^gw-permission:abcde:[0-9a-f]{32}$/);
    expect(second).toBe(`${first}:1`);
  });

  test("no answer, then a 429: the same key each time (a replay never posts twice)", async () => {
    const keys = await relayWith([noAnswer, limited]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  test("502, no answer, 502: new key after each 502, kept after no answer", async () => {
    const [a, b, c, d] = await relayWith([failed502, noAnswer, failed502]);
    expect([b, c, d]).toEqual([`${a}:1`, `${a}:1`, `${a}:3`]);
  });
});

test("a verdict counts only over Discord or iMessage itself: SMS, RCS, another or no service never", () => {
  const m = (source: "device_messenger" | "community_chat", service?: string) => ({
    source,
    raw: service === undefined ? {} : { service },
  });
  expect(authenticated(m("community_chat"))).toBe(true);
  expect(authenticated(m("device_messenger", "iMessage"))).toBe(true);
  expect(authenticated(m("device_messenger", "imessage"))).toBe(true);
  for (const s of ["SMS", "RCS", "rcs", "iMessageLite", ""])
    expect(authenticated(m("device_messenger", s))).toBe(false);
  expect(authenticated(m("device_messenger"))).toBe(false);
});
