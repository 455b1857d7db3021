import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import type { ApiClient, ApiResponse } from "../../src/mcp/api-client.ts";
import { BACKOFF_MS } from "../../src/mcp/backoff.ts";
import {
  CHANNEL_INSTRUCTIONS,
  CHANNEL_METHOD,
  type ChannelNotification,
  channelAgentId,
  channelNotification,
  followChannel,
  LOOKBACK_MS,
  WAIT_S,
} from "../../src/mcp/channel.ts";
import { recordingLogger } from "../helpers/logger.ts";

const envelope = (over: Partial<Envelope> = {}): Envelope => ({
  id: "msg_01HZY0000000000000000000AA",
  source: "community_chat",
  channel_id: "community_chat:channel:42",
  channel_type: "group",
  sender: { id: "1001", display_name: "Ann", person_id: "ann" },
  text: "hello",
  attachments: [],
  reply_to: null,
  timestamp: "2026-11-24T10:00:00.000Z",
  direction: "inbound",
  raw: {},
  ...over,
});

describe("channelNotification", () => {
  test("text and every meta attribute, all strings", () => {
    const n = channelNotification(envelope({ reply_to: "msg_01HZY0000000000000000000AB" }));
    expect(n).toEqual({
      method: CHANNEL_METHOD,
      params: {
        content: "hello",
        meta: {
          platform: "community_chat",
          channel_id: "community_chat:channel:42",
          message_id: "msg_01HZY0000000000000000000AA",
          sender: "Ann",
          sender_id: "1001",
          person_id: "ann",
          ts: "2026-11-24T10:00:00.000Z",
          reply_to: "msg_01HZY0000000000000000000AB",
        },
      },
    });
    for (const [k, v] of Object.entries(n.params.meta)) {
      expect(k).toMatch(/^[A-Za-z0-9_]+$/);
      expect(typeof v).toBe("string");
    }
  });

  test("an attachment-only message gets a placeholder and the attachments' ids, types, sizes and URLs", () => {
    const att = {
      id: "att_01HZY0000000000000000000AA",
      url: "http://127.0.0.1:8080/attachments/att_01HZY0000000000000000000AA",
      mime: "image/heic",
      size_bytes: 2048,
    };
    const one = channelNotification(envelope({ text: "", attachments: [att] }));
    expect(one.params.content).toBe("(attachment)");
    expect(one.params.meta.attachments).toBe(`${att.id} image/heic 2048 bytes ${att.url}`);
    expect(one.params.meta.attachment_ids).toBe(att.id);
    const other = "att_01HZY0000000000000000000AB";
    const two = channelNotification(
      envelope({ text: "", attachments: [att, { ...att, id: other, mime: "application/pdf" }] }),
    );
    expect(two.params.content).toBe("(2 attachments)");
    expect(two.params.meta.attachments?.split("; ")).toHaveLength(2);
    expect(two.params.meta.attachment_ids).toBe(`${att.id},${other}`);
    expect(channelNotification(envelope({ text: "see this", attachments: [att] })).params.content).toBe(
      "see this",
    );
  });

  test("no attachments, no attachments or attachment_ids attribute", () => {
    expect(channelNotification(envelope()).params.meta).not.toHaveProperty("attachment_ids");
    expect(channelNotification(envelope()).params.meta).not.toHaveProperty("attachments");
  });

  test("the instructions name the extended tools and that reactions and edits are Discord only", () => {
    for (const tool of ["get_attachment", "react", "edit_message", "list_channels", "search_messages"])
      expect(CHANNEL_INSTRUCTIONS).toContain(tool);
    expect(CHANNEL_INSTRUCTIONS).toContain("PLATFORM_UNSUPPORTED");
    expect(CHANNEL_INSTRUCTIONS).toContain("attachment_ids");
  });

  test("no person_id attribute when the sender has none", () => {
    const n = channelNotification(envelope({ sender: { id: "x", display_name: "x", person_id: null } }));
    expect(n.params.meta).not.toHaveProperty("person_id");
  });
});

/** A scripted API: each unread call takes the next answer; mark_read answers from `marks`. */
function scriptedApi(unread: ApiResponse[], marks: ApiResponse[] = []) {
  const calls: { method: string; path: string; agentId?: string; query?: unknown; body?: unknown }[] = [];
  let stop: () => void = () => {};
  const api: ApiClient = {
    async call(method, path, opts = {}) {
      calls.push({ method, path, agentId: opts.agentId, query: opts.query, body: opts.body });
      if (path === "/messages/mark_read")
        return marks.shift() ?? { ok: true, status: 200, body: { marked_count: 0 } };
      const next = unread.shift();
      if (next) return next;
      stop();
      return new Promise<ApiResponse>((resolve) =>
        opts.signal?.addEventListener("abort", () => resolve({ ok: false, status: 0, body: {} })),
      );
    },
  };
  return { api, calls, onDrained: (f: () => void) => (stop = f) };
}
const page = (...messages: Envelope[]): ApiResponse => ({
  ok: true,
  status: 200,
  body: { messages, next_since: "" },
});
const down: ApiResponse = { ok: false, status: 0, body: { error: { code: "INTERNAL_ERROR" } } };

async function run(unread: ApiResponse[], marks: ApiResponse[] = []) {
  const s = scriptedApi(unread, marks);
  const pushed: ChannelNotification[] = [];
  const slept: number[] = [];
  const drained = new Promise<void>((resolve) => s.onDrained(resolve));
  const follower = followChannel({
    api: s.api,
    agentId: "claude-code",
    notify: async (n) => void pushed.push(n),
    now: () => Date.UTC(2026, 10, 24, 12),
    sleep: async (ms) => void slept.push(ms),
    // 0.5: the middle of the jitter, so each wait is BACKOFF_MS's step exactly.
    random: () => 0.5,
    log: recordingLogger(),
  });
  await drained;
  await follower.stop();
  return { pushed, slept, calls: s.calls };
}

describe("followChannel", () => {
  test("long-polls the companion agent's unread since the lookback and marks what it pushed there", async () => {
    const a = envelope();
    const r = await run([page(a)]);
    expect(r.pushed.map((n) => n.params.meta.message_id)).toEqual([a.id]);
    const [poll, mark] = r.calls;
    expect(poll).toMatchObject({
      path: "/messages/unread",
      agentId: channelAgentId("claude-code"),
      query: {
        since: new Date(Date.UTC(2026, 10, 24, 12) - LOOKBACK_MS).toISOString(),
        limit: 100,
        wait: WAIT_S,
      },
    });
    expect(mark).toMatchObject({
      path: "/messages/mark_read",
      agentId: "claude-code#channel",
      body: { message_ids: [a.id] },
    });
  });

  test("a message whose marking failed is not pushed again; the failure backs off", async () => {
    const a = envelope();
    const b = envelope({ id: "msg_01HZY0000000000000000000AB", text: "second" });
    const r = await run([page(a), page(a), page(a, b)], [down, down]);
    expect(r.pushed.map((n) => n.params.content)).toEqual(["hello", "second"]);
    expect(r.slept).toEqual([BACKOFF_MS[0]]);
  });

  test("a 503 SERVICE_BUSY waits its Retry-After (stretched by the jitter), not the short step", async () => {
    const busy: ApiResponse = {
      ok: false,
      status: 503,
      retryAfter: "3",
      body: { error: { code: "SERVICE_BUSY", message: "busy", details: { retry_after_s: 3 } } },
    };
    const r = await run([busy, busy, page(envelope())]);
    expect(r.slept).toEqual([3300, 3300]);
    expect(r.pushed).toHaveLength(1);
  });

  test("while gw serve is away it retries with growing waits, then resumes", async () => {
    const r = await run([down, down, down, page(envelope())]);
    expect(r.slept).toEqual([BACKOFF_MS[0], BACKOFF_MS[1], BACKOFF_MS[2]]);
    expect(r.pushed).toHaveLength(1);
  });
});
