/**
 * `gw mcp` driven by the official MCP SDK client over stdio, as Claude Code or Cursor would start it:
 * against a recording HTTP server (exact requests, error envelopes, validation before any request)
 * and against a real service (happy paths). One client runs the compiled binary.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import pkg from "../../package.json" with { type: "json" };
import { recordingApi } from "../fakes/recording-api.ts";
import type { RecordingConnector } from "../fakes/recording-connector.ts";
import { BINARY, ensureBinary, freePort, ROOT } from "../helpers/process.ts";
import { inbound, TOKEN, testService } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

type ToolResult = {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  data?: unknown;
  isError?: boolean;
};

const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.close();
});

async function connect(env: Record<string, string>, opts: { binary?: boolean } = {}): Promise<Client> {
  const dir = tempDir();
  const transport = new StdioClientTransport({
    command: opts.binary ? BINARY : process.execPath,
    args: opts.binary ? ["mcp"] : [join(ROOT, "src/main.ts"), "mcp"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, GW_LOG_DIR: join(dir, "logs"), ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "gw-test", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown>) =>
  (await c.callTool({ name, arguments: args })) as unknown as ToolResult;

const api = recordingApi();
afterAll(() => api.stop());
// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
const client = await connect({
  GW_BEARER_TOKEN: "mcp-token-123456",
  GW_AGENT_ID: "agent-x",
  GW_BASE_URL: api.url,
});

describe("the server", () => {
  test("is named gw with the binary's version and lists exactly the four tools", async () => {
    expect(client.getServerVersion()).toMatchObject({ name: "gw", version: pkg.version });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "get_message_context",
      "list_unread_messages",
      "mark_read",
      "send_message",
    ]);
    for (const t of tools) {
      expect(t.description?.length).toBeGreaterThan(80);
      expect(t.outputSchema).toBeDefined();
    }
  });

  test("input schemas follow spec H", async () => {
    type Schema = {
      properties: Record<string, { pattern?: string; items?: { pattern?: string } }>;
      required: string[];
    };
    const byName: Record<string, Schema> = Object.fromEntries(
      (await client.listTools()).tools.map((t) => [t.name, t.inputSchema as unknown as Schema]),
    );
    expect(byName.list_unread_messages?.properties.limit).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 100,
    });
    expect(byName.list_unread_messages?.required ?? []).toEqual([]);
    expect(byName.get_message_context?.properties.before).toMatchObject({
      minimum: 0,
      maximum: 50,
      default: 5,
    });
    expect(byName.get_message_context?.properties.around_message_id?.pattern).toBe(
      "^msg_[0-9A-HJKMNP-TV-Z]{26}$",
    );
    expect(byName.get_message_context?.required.sort()).toEqual(["around_message_id", "channel_id"]);
    expect(byName.send_message?.required.sort()).toEqual(["channel_id", "text"]);
    expect(byName.send_message?.properties).not.toHaveProperty("idempotency_key");
    expect(JSON.stringify(byName.send_message?.properties.attachments)).toContain('"required":["url"]');
    expect(JSON.stringify(byName.send_message?.properties.attachments)).toContain('"required":["path"]');
    expect(byName.mark_read?.properties.message_ids?.items?.pattern).toBe("^msg_[0-9A-HJKMNP-TV-Z]{26}$");
  });
});

describe("one HTTP request per call, headers injected", () => {
  test("list_unread_messages", async () => {
    api.requests.length = 0;
    api.answer(() => ({ status: 200, body: { messages: [], next_since: "" } }));
    const r = await call(client, "list_unread_messages", {
      limit: 7,
      source: "device_messenger",
      since: "2026-01-01T00:00:00Z",
    });
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]).toMatchObject({
      method: "GET",
      path: "/messages/unread",
      query: { limit: "7", source: "device_messenger", since: "2026-01-01T00:00:00Z" },
      headers: { authorization: "Bearer mcp-token-123456", "x-agent-id": "agent-x" },
    });
    expect(r.isError).toBeFalsy();
    expect(r.content[0]?.text).toBe(JSON.stringify({ messages: [], next_since: "" }, null, 2));
    expect(r.structuredContent).toEqual({ messages: [], next_since: "" });
    expect(r.data).toEqual({ messages: [], next_since: "" });
  });

  test("send_message adds a fresh UUIDv4 Idempotency-Key on every call", async () => {
    api.requests.length = 0;
    api.answer(() => ({
      status: 200,
      body: { message_id: "msg_01ARZ3NDEKTSV4RRFFQ69G5FAV", sent_at: "2026-01-01T00:00:00.000Z" },
    }));
    const args = {
      channel_id: "+15555550100",
      text: "hi",
      attachments: [{ url: "/attachments/att_01ARZ3NDEKTSV4RRFFQ69G5FAV" }],
    };
    await call(client, "send_message", args);
    await call(client, "send_message", args);
    const keys = api.requests.map((r) => r.headers["idempotency-key"]);
    expect(keys).toHaveLength(2);
    for (const k of keys)
      expect(k).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[0]).not.toBe(keys[1]);
    expect(api.requests[0]).toMatchObject({ method: "POST", path: "/messages/send", body: args });
  });

  test("mark_read and get_message_context", async () => {
    api.requests.length = 0;
    api.answer((r) => ({
      status: 200,
      body: r.path.endsWith("mark_read") ? { marked_count: 1 } : { messages: [] },
    }));
    const id = "msg_01ARZ3NDEKTSV4RRFFQ69G5FAV";
    expect((await call(client, "mark_read", { message_ids: [id] })).structuredContent).toEqual({
      marked_count: 1,
    });
    await call(client, "get_message_context", { channel_id: "c1", around_message_id: id });
    expect(api.requests.map((r) => [r.method, r.path])).toEqual([
      ["POST", "/messages/mark_read"],
      ["GET", "/messages/context"],
    ]);
    expect(api.requests[0]?.headers["idempotency-key"]).toBeUndefined();
    expect(api.requests[1]?.query).toEqual({
      channel_id: "c1",
      around_message_id: id,
      before: "5",
      after: "5",
    });
  });
});

describe("errors", () => {
  const CODES: [string, number, Record<string, unknown>][] = [
    ["UNAUTHORIZED", 401, {}],
    ["AGENT_ID_REQUIRED", 400, {}],
    ["VALIDATION_FAILED", 400, { field: "since" }],
    ["MESSAGE_NOT_FOUND", 404, {}],
    ["CHANNEL_NOT_FOUND", 404, {}],
    ["ATTACHMENT_TOO_LARGE_FOR_PLATFORM", 413, {}],
    ["IDEMPOTENCY_KEY_REUSE", 422, {}],
    ["RATE_LIMITED", 429, { retry_after_s: 3 }],
    ["PLATFORM_AUTH", 502, {}],
    ["PLATFORM_SEND_FAILED", 502, {}],
  ];

  test.each(CODES)("%s surfaces as isError with the envelope verbatim", async (code, status, details) => {
    const envelope = { error: { code, message: `the ${code} message`, details } };
    api.answer(() => ({ status, body: envelope }));
    const tool = ["UNAUTHORIZED", "AGENT_ID_REQUIRED", "VALIDATION_FAILED"].includes(code)
      ? "list_unread_messages"
      : "send_message";
    const r = await call(client, tool, tool === "send_message" ? { channel_id: "c", text: "t" } : {});
    expect(r.isError).toBe(true);
    expect(JSON.parse(r.content[0]?.text ?? "")).toEqual(envelope);
    expect(r.data).toEqual(envelope);
  });

  test.each([
    ["list_unread_messages", { limit: 0 }],
    ["list_unread_messages", { limit: 101 }],
    ["list_unread_messages", { source: "sms" }],
    [
      "get_message_context",
      { channel_id: "c", around_message_id: "msg_01ARZ3NDEKTSV4RRFFQ69G5FAV", before: 51 },
    ],
    ["get_message_context", { channel_id: "c", around_message_id: "msg_1" }],
    ["get_message_context", { channel_id: "c" }],
    ["mark_read", { message_ids: ["nope"] }],
    ["send_message", { channel_id: "c" }],
    [
      "send_message",
      { channel_id: "c", text: "t", attachments: [{ url: "/attachments/x", path: "/tmp/x" }] },
    ],
    ["send_message", { channel_id: "c", text: "t", attachments: [{}] }],
    ["send_message", { channel_id: "c", text: "t", reply_to: "m1" }],
  ])("%s %p fails input validation before any request", async (name, args) => {
    api.requests.length = 0;
    const r = await call(client, name, args);
    expect(r.isError).toBe(true);
    expect(r.content[0]?.text).toContain("validation");
    expect(api.requests).toHaveLength(0);
  });

  test("an unreachable service is INTERNAL_ERROR naming the URL", async () => {
    const url = `http://127.0.0.1:${freePort()}`;
    const c = await connect({ GW_BEARER_TOKEN: "t0ken-value", GW_AGENT_ID: "a", GW_BASE_URL: url });
    const r = await call(c, "list_unread_messages", {});
    expect(r.isError).toBe(true);
    const env = r.data as { error: { code: string; message: string } };
    expect(env.error.code).toBe("INTERNAL_ERROR");
    expect(env.error.message).toContain(url);
  });
});

test("against a real gw service, through the compiled binary: unread, context, send, mark_read", async () => {
  await ensureBinary();
  const t = await testService();
  const port = freePort();
  t.svc.app.listen({ hostname: "127.0.0.1", port, reusePort: false });
  try {
    const [id] = t.seed([inbound({ text: "hello agent" })]) as [string];
    const c = await connect(
      { GW_BEARER_TOKEN: TOKEN, GW_AGENT_ID: "mcp-agent", GW_BASE_URL: `http://127.0.0.1:${port}` },
      { binary: true },
    );
    const unread = await call(c, "list_unread_messages", {});
    expect(
      ((unread.structuredContent?.messages ?? []) as { id: string; text: string }[]).map((m) => m.text),
    ).toEqual(["hello agent"]);
    const ctx = await call(c, "get_message_context", {
      channel_id: "+15555550100",
      around_message_id: id,
      before: 0,
      after: 0,
    });
    expect(((ctx.structuredContent?.messages ?? []) as unknown[]).length).toBe(1);
    const sent = await call(c, "send_message", {
      channel_id: "+15555550100",
      text: "hello human",
      reply_to: id,
    });
    expect(sent.isError).toBeFalsy();
    expect((t.connectors.device_messenger as RecordingConnector).sends.map((s) => s.text)).toEqual([
      "hello human",
    ]);
    expect(await call(c, "mark_read", { message_ids: [id] })).toMatchObject({
      structuredContent: { marked_count: 1 },
    });
    expect((await call(c, "list_unread_messages", {})).structuredContent).toMatchObject({ messages: [] });
    const missing = await call(c, "get_message_context", {
      channel_id: "x",
      around_message_id: "msg_00000000000000000000000000",
    });
    expect(missing.isError).toBe(true);
    expect((missing.data as { error: { code: string } }).error.code).toBe("MESSAGE_NOT_FOUND");
  } finally {
    await t.svc.app.stop();
  }
});
