/**
 * `gw mcp --extended` (extensions.md §2) through the official MCP client over stdio: which tools each mode
 * lists, and that react, edit_message, list_channels and search_messages each make exactly one HTTP request
 * (method, path, query or body, bearer and X-Agent-ID) against a recording server standing in for gw,
 * validate their input before any request and hand back the service's error envelope verbatim. (The answers
 * of react, edit_message, list_channels and search_messages from the real routes: mcp-actions.test.ts.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { recordingApi } from "../fakes/recording-api.ts";
import { closeAll, connectMcp, type McpHandle, toolNames } from "../helpers/mcp-client.ts";

const SPEC_FOUR = ["get_message_context", "list_unread_messages", "mark_read", "send_message"];
const EXTENDED = [
  ...SPEC_FOUR,
  "edit_message",
  "get_attachment",
  "list_channels",
  "react",
  "search_messages",
].sort();
const ID = "msg_01ARZ3NDEKTSV4RRFFQ69G5FAV";
const HEADERS = { authorization: "Bearer mcp-token-123456", "x-agent-id": "agent-x" };

const api = recordingApi();
const env = { GW_BEARER_TOKEN: "mcp-token-123456", GW_AGENT_ID: "agent-x", GW_BASE_URL: api.url };
// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
const ext: McpHandle = await connectMcp(["--extended"], env);
afterAll(async () => {
  await closeAll();
  api.stop();
});

describe("tool lists", () => {
  test("plain gw mcp lists exactly the spec's four; --extended and GW_MCP_EXTENDED=1 add the five", async () => {
    expect(await toolNames(await connectMcp([], env))).toEqual(SPEC_FOUR);
    expect(await toolNames(ext)).toEqual(EXTENDED);
    expect(await toolNames(await connectMcp([], { ...env, GW_MCP_EXTENDED: "1" }))).toEqual(EXTENDED);
    for (const t of (await ext.client.listTools()).tools) {
      expect(t.description?.length).toBeGreaterThan(80);
      expect(t.outputSchema).toBeDefined();
    }
  });

  test("--channel (and GW_MCP_CHANNEL=1) implies --extended", async () => {
    expect(await toolNames(await connectMcp(["--channel"], env))).toEqual(EXTENDED);
    expect(await toolNames(await connectMcp([], { ...env, GW_MCP_CHANNEL: "1" }))).toEqual(EXTENDED);
  });
});

describe("one HTTP request per call", () => {
  const cases: [string, Record<string, unknown>, unknown, Record<string, unknown>][] = [
    [
      "react",
      { message_id: ID, emoji: "👍", remove: true },
      { message_id: ID, emoji: "👍", removed: true },
      { method: "POST", path: "/messages/react", body: { message_id: ID, emoji: "👍", remove: true } },
    ],
    [
      "edit_message",
      { message_id: ID, text: "fixed" },
      { message_id: ID, edited_at: "2026-01-01T00:00:00.000Z" },
      { method: "POST", path: "/messages/edit", body: { message_id: ID, text: "fixed" } },
    ],
    [
      "list_channels",
      { source: "community_chat", limit: 500 },
      { channels: [] },
      { method: "GET", path: "/channels", query: { source: "community_chat", limit: "500" } },
    ],
    [
      "search_messages",
      { q: '"dinner" OR -x*', source: "device_messenger", channel_id: "+15555550100", limit: 3 },
      { messages: [] },
      {
        method: "GET",
        path: "/messages/search",
        query: { q: '"dinner" OR -x*', source: "device_messenger", channel_id: "+15555550100", limit: "3" },
      },
    ],
  ];

  test.each(cases)("%s", async (name, args, answer, expected) => {
    api.requests.length = 0;
    api.answer(() => ({ status: 200, body: answer }));
    const r = await ext.call(name, args);
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]).toMatchObject({ ...expected, headers: HEADERS });
    if (expected.method === "GET") expect(api.requests[0]?.body).toBeUndefined();
    else expect(api.requests[0]?.query).toEqual({});
    expect(api.requests[0]?.headers["idempotency-key"]).toBeUndefined();
    expect(r.isError).toBeFalsy();
    expect(r.content[0]?.text).toBe(JSON.stringify(answer, null, 2));
    expect(r.structuredContent).toEqual(answer as Record<string, unknown>);
    expect(r.data).toEqual(answer);
  });

  test("react without remove sends no remove field", async () => {
    api.requests.length = 0;
    api.answer(() => ({ status: 200, body: { message_id: ID, emoji: "<:gw:123>", removed: false } }));
    await ext.call("react", { message_id: ID, emoji: "<:gw:123>" });
    expect(api.requests[0]?.body).toEqual({ message_id: ID, emoji: "<:gw:123>" });
  });
});

describe("errors", () => {
  test.each([
    ["react", { message_id: ID, emoji: "👍" }, 422, "PLATFORM_UNSUPPORTED"],
    ["edit_message", { message_id: ID, text: "x" }, 422, "VALIDATION_FAILED"],
    ["list_channels", {}, 400, "AGENT_ID_REQUIRED"],
    ["search_messages", { q: "x" }, 401, "UNAUTHORIZED"],
  ])("%s: %i %s surfaces as isError with the envelope verbatim", async (name, args, status, code) => {
    const envelope = {
      error: { code, message: `the ${code} message`, details: { source: "device_messenger" } },
    };
    api.answer(() => ({ status, body: envelope }));
    const r = await ext.call(name, args);
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.content[0]?.text ?? "")).toEqual(envelope);
    expect(r.data).toEqual(envelope);
  });

  test.each([
    ["react", "a bad message id", { message_id: "msg_1", emoji: "👍" }],
    ["react", "no emoji", { message_id: ID }],
    ["react", "an empty emoji", { message_id: ID, emoji: "" }],
    ["react", "remove not a boolean", { message_id: ID, emoji: "👍", remove: "yes" }],
    ["edit_message", "no text", { message_id: ID }],
    ["edit_message", "2001 characters", { message_id: ID, text: "x".repeat(2001) }],
    ["list_channels", "limit 0", { limit: 0 }],
    ["list_channels", "limit 501", { limit: 501 }],
    ["list_channels", "an unknown source", { source: "sms" }],
    ["search_messages", "no q", {}],
    ["search_messages", "an empty q", { q: "" }],
    ["search_messages", "a q of 201 characters", { q: "x".repeat(201) }],
    ["search_messages", "limit 101", { q: "x", limit: 101 }],
    ["get_attachment", "a bad attachment id", { attachment_id: "att_nope" }],
    ["get_attachment", "no attachment id", {}],
  ])("%s with %s fails input validation before any request", async (name, _what, args) => {
    api.requests.length = 0;
    const r = await ext.call(name, args);
    expect(r.isError).toBe(true);
    expect(r.content[0]?.text).toContain("validation");
    expect(api.requests).toHaveLength(0);
  });
});
