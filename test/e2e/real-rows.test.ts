/**
 * Messages rows as real Macs write them (extensions.md §5), on a live `gw serve` over real HTTP reading a
 * chat.db written the way Messages writes it (bodies with part runs, message_summary_info plists): a real
 * unsend (an empty body, `rp` listing every part, `date_retracted` set then cleared) and each unsend
 * signature alone; a partial unsend; parts around an inline photo; a voice message's transcript. Seen through
 * unread, GET /messages/{id}, GET /events, search, the webhook body and a `gw mcp --channel` notification.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import type { GwEvent } from "../../src/core/event.ts";
import type { UnsendShape } from "../../src/demo/chatdb-writer.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { chatDbServeEnv, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { closeAll, connectMcp } from "../helpers/mcp-client.ts";
import { spawnGw, stopGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { TOKEN } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
const sink = webhookSink();
const { chat, port, env } = chatDbServeEnv({
  GW_WEBHOOK_URL: sink.url,
  GW_WEBHOOK_SECRET: "real-rows-secret",
  GW_WEBHOOK_EVENTS: "all",
});
const serve = spawnGw(["serve"], env);
await waitForHealth(port);
const channel = await connectMcp(["--channel"], {
  GW_BEARER_TOKEN: TOKEN,
  GW_AGENT_ID: "claude-code",
  GW_BASE_URL: `http://127.0.0.1:${port}`,
});
afterAll(async () => {
  await closeAll();
  await stopGw(serve);
  chat.writer.close();
  sink.stop();
});

const get = async (path: string) => {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "real-rows" },
  });
  return { status: res.status, body: (await res.json()) as { messages: Envelope[]; events: GwEvent[] } };
};
const unreadWith = (text: string) =>
  waitFor(
    async () => (await get("/messages/unread?limit=100")).body.messages.find((m) => m.text === text),
    `"${text}" unread`,
  );
const eventsOf = async (messageId: string) =>
  (await get("/events?limit=100")).body.events.filter((e) => e.message_id === messageId);
const search = async (q: string) => (await get(`/messages/search?q=${encodeURIComponent(q)}`)).body.messages;
const hooked = (pred: (body: string, kind: string) => boolean) =>
  waitFor(() => sink.hits.find((h) => pred(h.body, h.headers["x-gw-event"] ?? "")), "the webhook");
/** A file beside the chat.db standing in for a photo or a voice recording. */
const file = (name: string) => {
  const path = join(tempDir(), name);
  writeFileSync(path, "bytes");
  return { path };
};

describe("unsent", () => {
  test("a real unsend: message.deleted, 404, out of search; the webhook says so; clearing date_retracted later changes nothing", async () => {
    const m = chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "my secret plan alpha" });
    const env1 = await unreadWith("my secret plan alpha");
    chat.writer.unsend(m.rowid);
    const [deleted] = await waitFor(async () => {
      const e = await eventsOf(env1.id);
      return e.length > 0 ? e : undefined;
    }, "the delete event");
    expect(deleted?.kind).toBe("message.deleted");
    expect((await get(`/messages/${env1.id}`)).status).toBe(404);
    expect(await search("alpha")).toEqual([]);
    await hooked((b, k) => k === "message.deleted" && b.includes(env1.id));
    chat.writer.clearRetraction(m.rowid);
    // Another row after it makes the reader look again; the unsent one stays gone, with one event.
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "after the clear" });
    await unreadWith("after the clear");
    expect(await eventsOf(env1.id)).toHaveLength(1);
    expect((await get(`/messages/${env1.id}`)).status).toBe(404);
  });

  test.each(["retracted", "summary", "emptied", "is_empty"] as UnsendShape[])(
    "one signature alone (%s) is an unsend",
    async (shape) => {
      const text = `unsent by ${shape} only`;
      const m = chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
      const e = await unreadWith(text);
      chat.writer.unsend(m.rowid, shape);
      await waitFor(async () => ((await get(`/messages/${e.id}`)).status === 404 ? true : undefined), "404");
      expect((await eventsOf(e.id)).map((x) => x.kind)).toEqual(["message.deleted"]);
    },
  );
});

test("a partial unsend: an edit whose text is the parts left, everywhere", async () => {
  const m = chat.writer.message({
    chatGuid: FRIEND_CHAT,
    from: FRIEND,
    text: "",
    pieces: ["keep this part", file("p.jpg"), "take back bravoword"],
  });
  const e = await unreadWith("keep this part\ntake back bravoword");
  chat.writer.unsendParts(m.rowid, [2]);
  const edited = await waitFor(
    async () => (await eventsOf(e.id)).find((x) => x.kind === "message.edited"),
    "the edit",
  );
  expect(edited.data).toEqual({
    text: "keep this part",
    previous_text: "keep this part\ntake back bravoword",
  });
  const now = (await get(`/messages/${e.id}`)).body as unknown as Envelope;
  expect(now.text).toBe("keep this part");
  expect(await search("bravoword")).toEqual([]);
});

test("parts around an inline photo stay apart: unread, webhook, search, channel", async () => {
  chat.writer.message({
    chatGuid: FRIEND_CHAT,
    from: FRIEND,
    text: "",
    pieces: ["test 1", file("x.jpg"), "test 2"],
  });
  const e = await unreadWith("test 1\ntest 2");
  expect(e.attachments).toHaveLength(1);
  await hooked((b, k) => k === "message" && b.includes('"text":"test 1\\ntest 2"'));
  expect((await search("test")).map((x) => x.id)).toContain(e.id);
  await waitFor(() => channel.pushed.find((p) => p.content === "test 1\ntest 2"), "the channel notification");
});

test("a voice message: its transcript is the text (raw.audio_transcript), found by search, pushed to the channel", async () => {
  chat.writer.message({
    chatGuid: FRIEND_CHAT,
    from: FRIEND,
    text: "",
    attachments: [{ ...file("Audio Message.caf"), transferName: "Audio Message.caf" }],
    audioTranscript: "Call me when you land",
  });
  const e = await unreadWith("Call me when you land");
  expect(e.raw).toMatchObject({ audio_transcript: true });
  expect(e.attachments.map((a) => a.mime)).toEqual(["audio/x-caf"]);
  expect((await search("land")).map((x) => x.id)).toContain(e.id);
  await hooked((b, k) => k === "message" && b.includes("Call me when you land"));
  await waitFor(
    () => channel.pushed.find((p) => p.content === "Call me when you land"),
    "the channel notification",
  );
});
