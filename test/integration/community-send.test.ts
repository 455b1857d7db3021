/**
 * Sending to Discord end to end: POST /messages/send through the real service and discord.js to the
 * fake Discord. Replies, long-text splitting (one record), no pings, nonces, the 413 and 400 refusals
 * made before contacting the platform, and every platform failure mapped as discord.md §7 says.
 */
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import type { FakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH } from "../helpers/service.ts";

const discord = fakeDiscords();

async function world(tuning = {}) {
  const { fake, ann, guild, general } = await discord.home();
  const other = fake.channel(guild.id, { name: "other" });
  const dm = fake.dm(ann);
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id), tuning });
  const unread = async () => {
    const res = await gw.request("GET", "/messages/unread?limit=100", { headers: AGENT });
    return ((await res.json()) as { messages: Envelope[] }).messages;
  };
  /** Makes the channel known (spec E.1) and returns the stored inbound message. */
  const observe = async (channelId: string, content = "hi") => {
    const before = (await unread()).length;
    fake.message(channelId, { author: ann, content });
    const list = await waitFor(async () => {
      const l = await unread();
      return l.length > before ? l : undefined;
    }, "the inbound message");
    return list.at(-1) as Envelope;
  };
  const send = (body: Record<string, unknown>, key?: string) =>
    gw.request("POST", "/messages/send", {
      headers: { ...AUTH, ...(key ? { "idempotency-key": key } : {}) },
      body,
    });
  const posts = () => fake.requests.filter((r) => r.method === "POST" && r.path.endsWith("/messages"));
  return { fake, gw, ann, guild, general, other, dm, unread, observe, send, posts };
}

const gwChannel = (id: string) => `community_chat:channel:${id}`;

describe("send", () => {
  test("a reply to a guild channel: one post with a reference, no pings and a nonce; one outbound record", async () => {
    const w = await world();
    const original = await w.observe(w.general.id, "question?");
    const res = await w.send({
      channel_id: gwChannel(w.general.id),
      text: "answer @everyone",
      reply_to: original.id,
    });
    expect(res.status).toBe(200);
    const { message_id } = (await res.json()) as { message_id: string };
    expect(w.fake.posted).toHaveLength(1);
    const body = w.fake.posted[0]?.body as Record<string, unknown>;
    expect(body).toMatchObject({
      content: "answer @everyone",
      allowed_mentions: { parse: [] },
      enforce_nonce: true,
      message_reference: { message_id: (original.raw as { id: string }).id, fail_if_not_exists: false },
    });
    expect(String(body.nonce)).toHaveLength(25);
    const ctx = await w.gw.request(
      "GET",
      `/messages/context?channel_id=${encodeURIComponent(gwChannel(w.general.id))}&around_message_id=${original.id}`,
      { headers: AGENT },
    );
    const { messages } = (await ctx.json()) as { messages: Envelope[] };
    expect(messages.map((m) => [m.direction, m.text])).toEqual([
      ["inbound", "question?"],
      ["outbound", "answer @everyone"],
    ]);
    expect(messages[1]).toMatchObject({
      id: message_id,
      reply_to: original.id,
      sender: { id: w.fake.bot.id },
    });
    // The platform echoes the post as MESSAGE_CREATE: it is the bot's own, so nothing new is stored.
    await waitFor(() => (w.fake.history(w.general.id).length === 2 ? true : undefined), "the echo");
    await Bun.sleep(100);
    const n = w.gw.svc.store.db.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number };
    expect(n.n).toBe(2);
  });

  test("a DM channel seen before can be answered", async () => {
    const w = await world();
    await w.observe(w.dm.id, "psst");
    const res = await w.send({ channel_id: `community_chat:dm:${w.dm.id}`, text: "hello back" });
    expect(res.status).toBe(200);
    expect(w.fake.posted.map((p) => [p.channelId, p.body.content])).toEqual([[w.dm.id, "hello back"]]);
  });

  test("text over 2,000 characters goes out as consecutive posts under one message id", async () => {
    const w = await world();
    await w.observe(w.general.id);
    const text = `${"a".repeat(1900)}\n${"b".repeat(1900)}\n${"c".repeat(300)}`;
    const res = await w.send({ channel_id: gwChannel(w.general.id), text });
    expect(res.status).toBe(200);
    expect(w.fake.posted.map((p) => p.body.content)).toEqual([
      "a".repeat(1900),
      "b".repeat(1900),
      "c".repeat(300),
    ]);
    expect(new Set(w.fake.posted.map((p) => p.body.nonce)).size).toBe(3);
    const rows = w.gw.svc.store.db
      .query("SELECT text, platform_id FROM messages WHERE direction = 'outbound'")
      .all();
    expect(rows).toEqual([{ text, platform_id: w.fake.posted[0]?.message.id as string }]);
  });

  test("refused before contacting Discord: an attachment (413), blank text (400), an unknown channel (404)", async () => {
    const w = await world();
    await w.observe(w.general.id);
    const requestsBefore = w.fake.requests.length;
    const withFile = await w.send({
      channel_id: gwChannel(w.general.id),
      text: "see file",
      attachments: [{ path: "/etc/hostname" }],
    });
    expect(withFile.status).toBe(413);
    expect(((await withFile.json()) as { error: { code: string } }).error.code).toBe(
      "ATTACHMENT_TOO_LARGE_FOR_PLATFORM",
    );
    const blank = await w.send({ channel_id: gwChannel(w.general.id), text: "  " });
    expect(blank.status).toBe(400);
    expect(await blank.json()).toMatchObject({
      error: { code: "VALIDATION_FAILED", details: { field: "text" } },
    });
    const unknown = await w.send({ channel_id: gwChannel(w.other.id), text: "hi" });
    expect(unknown.status).toBe(404);
    expect(w.fake.requests.length).toBe(requestsBefore);
  });
});

describe("platform failures", () => {
  const failing = async (rule: Parameters<FakeDiscord["fail"]>[0]) => {
    const w = await world();
    await w.observe(w.general.id);
    w.fake.fail(rule);
    const res = await w.send({ channel_id: gwChannel(w.general.id), text: "hello" });
    return {
      w,
      res,
      body: (await res.json()) as { error: { code: string; details: Record<string, unknown> } },
    };
  };

  test("403 Missing Permissions → 502 PLATFORM_AUTH with Discord's code", async () => {
    const { res, body } = await failing({
      method: "POST",
      path: /\/messages$/,
      status: 403,
      body: { message: "Missing Permissions", code: 50013 },
    });
    expect(res.status).toBe(502);
    expect(body.error).toMatchObject({
      code: "PLATFORM_AUTH",
      details: { status: 403, discord_code: 50013 },
    });
  });

  test("401 → 502 PLATFORM_AUTH, and the connector reports the rejected token", async () => {
    const { w, res, body } = await failing({
      method: "POST",
      path: /\/messages$/,
      status: 401,
      body: { message: "401: Unauthorized", code: 0 },
    });
    expect(res.status).toBe(502);
    expect(body.error.code).toBe("PLATFORM_AUTH");
    expect(await w.gw.health()).toMatchObject({
      state: "error",
      detail: expect.stringContaining("Reset Token"),
    });
    const again = await w.send({ channel_id: gwChannel(w.general.id), text: "again" });
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("PLATFORM_AUTH");
  });

  test("404 Unknown Channel → 502 PLATFORM_SEND_FAILED", async () => {
    const { body } = await failing({
      method: "POST",
      path: /\/messages$/,
      status: 404,
      body: { message: "Unknown Channel", code: 10003 },
    });
    expect(body.error).toMatchObject({ code: "PLATFORM_SEND_FAILED", details: { discord_code: 10003 } });
  });

  test("5xx after the client's retries → 502 PLATFORM_SEND_FAILED; nothing was posted", async () => {
    const { w, body } = await failing({ method: "POST", path: /\/messages$/, status: 503, times: 5 });
    expect(body.error).toMatchObject({ code: "PLATFORM_SEND_FAILED", details: { status: 503 } });
    expect(w.posts().length).toBe(2);
    expect(w.fake.posted).toHaveLength(0);
  });

  test("a hung request → 502 PLATFORM_SEND_FAILED with an unknown outcome", async () => {
    const { body } = await failing({
      method: "POST",
      path: /\/messages$/,
      status: 200,
      hang: true,
      times: 5,
    });
    expect(body.error).toMatchObject({ code: "PLATFORM_SEND_FAILED", details: { outcome: "unknown" } });
  });

  test("a short 429 is waited out and the send succeeds", async () => {
    const w = await world();
    await w.observe(w.general.id);
    w.fake.rateLimit({ method: "POST", path: /\/messages$/, retryAfterS: 0.3 });
    const t0 = performance.now();
    const res = await w.send({ channel_id: gwChannel(w.general.id), text: "patient" });
    expect(res.status).toBe(200);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(300);
    expect(w.fake.posted.map((p) => p.body.content)).toEqual(["patient"]);
  });

  test("a long 429 fails at once with the wait in details, and other channels are not held up", async () => {
    const w = await world();
    await w.observe(w.general.id);
    await w.observe(w.other.id);
    // Discord keeps answering 429 until the bucket resets (discord.js may also refuse on its own).
    w.fake.rateLimit({
      method: "POST",
      path: `/channels/${w.general.id}/messages`,
      retryAfterS: 30,
      times: 2,
    });
    const limited = await w.send({ channel_id: gwChannel(w.general.id), text: "first" });
    expect(limited.status).toBe(502);
    expect(await limited.json()).toMatchObject({
      error: {
        code: "PLATFORM_SEND_FAILED",
        details: { reason: "rate_limited", retry_after_ms: expect.any(Number) },
      },
    });
    const t0 = performance.now();
    const again = await w.send({ channel_id: gwChannel(w.general.id), text: "second" });
    expect(again.status).toBe(502);
    const elsewhere = await w.send({ channel_id: gwChannel(w.other.id), text: "not blocked" });
    expect(elsewhere.status).toBe(200);
    expect(performance.now() - t0).toBeLessThan(2_000);
    expect(w.fake.posted.map((p) => p.body.content)).toEqual(["not blocked"]);
  });

  test("a later part failing reports the parts already sent", async () => {
    const w = await world();
    await w.observe(w.general.id);
    const text = `${"a".repeat(1500)}\n${"b".repeat(1500)}`;
    let n = 0;
    w.fake.fail({
      method: "POST",
      path: /\/messages$/,
      status: 403,
      body: { message: "Missing Access", code: 50001 },
      when: () => ++n === 2,
    });
    const res = await w.send({ channel_id: gwChannel(w.general.id), text });
    expect(res.status).toBe(502);
    expect(await res.json()).toMatchObject({
      error: { code: "PLATFORM_AUTH", details: { sent_parts: 1, total_parts: 2 } },
    });
  });
});

describe("idempotency", () => {
  test("a post that Discord made but never answered is retried with the same nonce: one message", async () => {
    const w = await world();
    await w.observe(w.general.id);
    w.fake.fail({ method: "POST", path: /\/messages$/, status: 200, hang: "after-create" });
    const res = await w.send({ channel_id: gwChannel(w.general.id), text: "exactly once" });
    expect(res.status).toBe(200);
    expect(w.posts()).toHaveLength(2);
    const [first, retry] = w.posts().map((r) => r.body as { nonce: string });
    expect(first?.nonce).toHaveLength(25);
    expect(retry?.nonce).toBe(first?.nonce as string);
    expect(w.fake.posted.map((p) => p.body.content)).toEqual(["exactly once"]);
    const { message_id } = (await res.json()) as { message_id: string };
    expect(w.gw.svc.store.messages.get(message_id)?.platform_id).toBe(w.fake.posted[0]?.message.id as string);
  });

  test("a replayed key returns the first answer and posts nothing more", async () => {
    const w = await world();
    await w.observe(w.general.id);
    const body = { channel_id: gwChannel(w.general.id), text: "once" };
    const first = await w.send(body, "key-1");
    const second = await w.send(body, "key-1");
    expect(await second.text()).toBe(await first.text());
    expect(w.fake.posted).toHaveLength(1);
  });
});
