/**
 * POST /messages/react and POST /messages/edit (extensions.md §2) over HTTP through the real connectors:
 * the fake Discord with the real discord.js (REST calls and their gateway echoes, in either order), and
 * the Messages stand-in for iMessage, which cannot do either. Each action is one stored, undelivered
 * event; refusals come before the platform is called and before a rate-limit token is spent.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Envelope } from "../../src/core/envelope.ts";
import type { EventRow } from "../../src/store/events.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { deviceService, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH } from "../helpers/service.ts";

const discord = fakeDiscords();

type Gw = Awaited<ReturnType<typeof communityService>>;

const post = (gw: Pick<Gw, "request">, path: string, body: unknown) =>
  gw.request("POST", path, { headers: AUTH, body });

async function errorOf(
  res: Response,
): Promise<{ status: number; code: string; details: Record<string, unknown> }> {
  const body = (await res.json()) as { error: { code: string; details: Record<string, unknown> } };
  return { status: res.status, code: body.error.code, details: body.error.details };
}

async function unread(gw: Pick<Gw, "request">): Promise<Envelope[]> {
  const res = await gw.request("GET", "/messages/unread?limit=100", { headers: AGENT });
  return ((await res.json()) as { messages: Envelope[] }).messages;
}

const storedEvents = (gw: Gw): Pick<EventRow, "kind" | "visible" | "data" | "sender_id">[] =>
  gw.svc.store.db
    .query<EventRow, []>("SELECT * FROM events ORDER BY id")
    .all()
    .map(({ kind, visible, data, sender_id }) => ({ kind, visible, data, sender_id }));

/** A Discord world with Ann allowlisted, one message from her in #general, and the service reading it. */
async function discordWorld(env: Record<string, string> = {}) {
  const { fake, ann, guild, general } = await discord.home();
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id), env });
  const posted = fake.message(general.id, { author: ann, content: "hello bot" });
  const [hello] = await waitFor(async () => {
    const list = await unread(gw);
    return list.length === 1 ? list : undefined;
  }, "Ann's message");
  return { fake, ann, guild, general, gw, hello: hello as Envelope, helloOnDiscord: posted.id as string };
}

async function sendText(gw: Gw, channelId: string, text: string): Promise<string> {
  const res = await post(gw, "/messages/send", { channel_id: channelId, text });
  expect(res.status).toBe(200);
  return ((await res.json()) as { message_id: string }).message_id;
}

describe("POST /messages/react on Discord", () => {
  test("adds and removes the bot's reaction: one REST call each, one undelivered event each, a repeat is a no-op", async () => {
    const w = await discordWorld();
    const react = (emoji: string, remove?: boolean) =>
      post(w.gw, "/messages/react", {
        message_id: w.hello.id,
        emoji,
        ...(remove === undefined ? {} : { remove }),
      });
    const added = await react("👍");
    expect(added.status).toBe(200);
    expect(await added.json()).toEqual({ message_id: w.hello.id, emoji: "👍", removed: false });
    expect((await react("👍")).status).toBe(200);
    expect((await react("<:party:123456789012345678>")).status).toBe(200);
    const removed = await react("👍", true);
    expect(await removed.json()).toEqual({ message_id: w.hello.id, emoji: "👍", removed: true });
    expect(w.fake.reactionCalls.map((c) => [c.messageId, c.emoji, c.add])).toEqual([
      [w.helloOnDiscord, "👍", true],
      [w.helloOnDiscord, "👍", true],
      [w.helloOnDiscord, "party:123456789012345678", true],
      [w.helloOnDiscord, "👍", false],
    ]);
    // The echoes of the bot's own reactions arrive too; wait until the last one could have been stored.
    w.fake.react(w.general.id, w.helloOnDiscord, w.ann, "🎉");
    await waitFor(
      () => (storedEvents(w.gw).some((e) => e.visible === 1) ? true : undefined),
      "Ann's reaction",
    );
    const bot = w.fake.bot.id;
    expect(storedEvents(w.gw)).toEqual([
      { kind: "reaction.added", visible: 0, data: '{"emoji":"👍"}', sender_id: bot },
      { kind: "reaction.added", visible: 0, data: '{"emoji":"<:party:123456789012345678>"}', sender_id: bot },
      { kind: "reaction.removed", visible: 0, data: '{"emoji":"👍"}', sender_id: bot },
      { kind: "reaction.added", visible: 1, data: '{"emoji":"🎉"}', sender_id: w.ann.id },
    ]);
    const events = await w.gw.request("GET", "/events", { headers: AGENT });
    expect(
      ((await events.json()) as { events: { sender: { id: string } }[] }).events.map((e) => e.sender.id),
    ).toEqual([w.ann.id]);
  });

  test("refusals: not an emoji 400, an emoji Discord does not know 400, an unknown or quarantined message 404", async () => {
    const w = await discordWorld();
    const sam = w.fake.user({ username: "sam_user" });
    w.fake.message(w.general.id, { author: sam, content: "stranger" });
    const quarantined = await waitFor(() => {
      const row = w.gw.svc.store.db
        .query<{ id: string }, []>("SELECT id FROM messages WHERE allowlist_status = 'unknown'")
        .get();
      return row?.id;
    }, "the stranger's message");
    for (const emoji of ["thumbs up", "👍👍", ":party:", "<:x:1>", "a"])
      expect(await errorOf(await post(w.gw, "/messages/react", { message_id: w.hello.id, emoji }))).toEqual({
        status: 400,
        code: "VALIDATION_FAILED",
        details: { field: "emoji", rule: "emoji" },
      });
    expect(
      await errorOf(
        await post(w.gw, "/messages/react", { message_id: w.hello.id, emoji: "<:nope:123456789012345678>" }),
      ),
    ).toEqual({ status: 400, code: "VALIDATION_FAILED", details: { field: "emoji", rule: "unknown_emoji" } });
    for (const id of [quarantined, "msg_01ARZ3NDEKTSV4RRFFQ69G5FAV"])
      expect((await errorOf(await post(w.gw, "/messages/react", { message_id: id, emoji: "👍" }))).code).toBe(
        "MESSAGE_NOT_FOUND",
      );
    // Only the unknown custom emoji reached Discord (which refused it).
    const calls = w.fake.requests.filter((r) => r.path.includes("/reactions/"));
    expect(calls.map((r) => decodeURIComponent(r.path.split("/")[6] ?? ""))).toEqual([
      "nope:123456789012345678",
    ]);
    expect(w.fake.reactionCalls).toEqual([]);
    expect(storedEvents(w.gw)).toEqual([]);
  });

  test("takes the channel's rate-limit token, shared with sends: 429 with Retry-After, nothing called", async () => {
    const w = await discordWorld({ GW_RATE_LIMIT_BURST: "2", GW_RATE_LIMIT_PER_CHANNEL_RPS: "0.01" });
    expect((await post(w.gw, "/messages/react", { message_id: w.hello.id, emoji: "👍" })).status).toBe(200);
    await sendText(w.gw, w.hello.channel_id, "one send");
    const limited = await post(w.gw, "/messages/react", { message_id: w.hello.id, emoji: "🎉" });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await errorOf(limited)).code).toBe("RATE_LIMITED");
    expect(w.fake.reactionCalls).toHaveLength(1);
  });
});

describe("POST /messages/edit on Discord", () => {
  test("edits gw's own message: the platform and the stored text change, one undelivered event, echo first", async () => {
    const w = await discordWorld();
    const id = await sendText(w.gw, w.hello.channel_id, "working…");
    const res = await post(w.gw, "/messages/edit", { message_id: id, text: "done: 3 files" });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { message_id: string; edited_at: string };
    expect(body.message_id).toBe(id);
    expect(body.edited_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(w.fake.edits.map((e) => e.content)).toEqual(["done: 3 files"]);
    const read = await w.gw.request("GET", `/messages/${id}`, { headers: AGENT });
    expect(((await read.json()) as Envelope).text).toBe("done: 3 files");
    // The echo (MESSAGE_UPDATE) went out before the REST answer: a later message proves it was handled.
    w.fake.message(w.general.id, { author: w.ann, content: "after" });
    await waitFor(async () => ((await unread(w.gw)).length === 2 ? true : undefined), "the later message");
    expect(storedEvents(w.gw)).toEqual([
      {
        kind: "message.edited",
        visible: 0,
        data: JSON.stringify({ text: "done: 3 files", previous_text: "working…" }),
        sender_id: w.fake.bot.id,
      },
    ]);
  });

  test("REST answer first, echo later: still one event, never delivered", async () => {
    const w = await discordWorld();
    const id = await sendText(w.gw, w.hello.channel_id, "draft");
    w.fake.gateway.hold();
    expect((await post(w.gw, "/messages/edit", { message_id: id, text: "final" })).status).toBe(200);
    expect(storedEvents(w.gw).map((e) => e.kind)).toEqual(["message.edited"]);
    w.fake.gateway.release();
    w.fake.message(w.general.id, { author: w.ann, content: "after" });
    await waitFor(async () => ((await unread(w.gw)).length === 2 ? true : undefined), "the later message");
    expect(storedEvents(w.gw)).toEqual([
      {
        kind: "message.edited",
        visible: 0,
        data: JSON.stringify({ text: "final", previous_text: "draft" }),
        sender_id: w.fake.bot.id,
      },
    ]);
    const events = await w.gw.request("GET", "/events", { headers: AGENT });
    expect(((await events.json()) as { events: unknown[] }).events).toEqual([]);
  });

  test("refusals: another author's message, a split message, blank or too long text, an unknown id", async () => {
    const w = await discordWorld();
    const long = await sendText(w.gw, w.hello.channel_id, `${"a".repeat(1990)}\n${"b".repeat(100)}`);
    const own = await sendText(w.gw, w.hello.channel_id, "short");
    const edit = async (message_id: string, text: string) =>
      errorOf(await post(w.gw, "/messages/edit", { message_id, text }));
    expect(await edit(w.hello.id, "x")).toEqual({
      status: 422,
      code: "VALIDATION_FAILED",
      details: { field: "message_id", rule: "own_messages_only" },
    });
    expect(await edit(long, "x")).toEqual({
      status: 422,
      code: "VALIDATION_FAILED",
      details: { field: "message_id", rule: "multi_part" },
    });
    expect(await edit(own, "  ")).toEqual({
      status: 400,
      code: "VALIDATION_FAILED",
      details: { field: "text", rule: "non_blank_for_community_chat" },
    });
    const tooLong = await edit(own, "x".repeat(2001));
    expect([tooLong.status, tooLong.code]).toEqual([400, "VALIDATION_FAILED"]);
    expect((await edit("msg_01ARZ3NDEKTSV4RRFFQ69G5FAV", "x")).status).toBe(404);
    expect(w.fake.edits).toEqual([]);
    expect((await post(w.gw, "/messages/edit", { message_id: own, text: "x".repeat(2000) })).status).toBe(
      200,
    );
  });
});

describe("iMessage", () => {
  test("react and edit answer 422 PLATFORM_UNSUPPORTED, and the Messages stand-in is never called for them", async () => {
    const t = await deviceService();
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hi from the phone" });
    const [hi] = await waitFor(async () => {
      const list = await unread(t);
      return list.length === 1 ? list : undefined;
    }, "the iMessage");
    const sent = await post(t, "/messages/send", { channel_id: (hi as Envelope).channel_id, text: "answer" });
    const own = ((await sent.json()) as { message_id: string }).message_id;
    expect(sent.status).toBe(200);
    const standIn = () => readFileSync(t.env.GW_STANDIN_LOG as string, "utf8");
    const before = standIn();
    expect(before).toContain("answer");
    expect(
      await errorOf(await post(t, "/messages/react", { message_id: (hi as Envelope).id, emoji: "👍" })),
    ).toEqual({
      status: 422,
      code: "PLATFORM_UNSUPPORTED",
      details: { source: "device_messenger", action: "react" },
    });
    expect(await errorOf(await post(t, "/messages/edit", { message_id: own, text: "better" }))).toEqual({
      status: 422,
      code: "PLATFORM_UNSUPPORTED",
      details: { source: "device_messenger", action: "edit" },
    });
    expect(standIn()).toBe(before);
    expect(t.svc.store.db.query("SELECT 1 FROM events").all()).toEqual([]);
  });
});
