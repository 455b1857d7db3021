/**
 * Events from both platforms end to end (issue events, items 2–4), through the real connectors and the
 * API: iMessage tapbacks, edits and unsends written to a chat.db the way Messages writes them; Discord
 * MESSAGE_UPDATE, MESSAGE_DELETE(_BULK) and reactions from the fake Discord with the real discord.js.
 * GET /events shows what agents may see, once each, and the message reads follow the changes.
 */
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import type { GwEvent } from "../../src/core/event.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { deviceService, FRIEND, FRIEND_CHAT, GROUP_CHAT, STRANGER } from "../helpers/device.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, type makeRequest } from "../helpers/service.ts";

type Request = ReturnType<typeof makeRequest>;

const discord = fakeDiscords();

async function events(request: Request, since = ""): Promise<GwEvent[]> {
  const res = await request("GET", `/events?since=${since}&limit=100`, { headers: AGENT });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: GwEvent[] }).events;
}

const waitEvents = (request: Request, n: number, what: string) =>
  waitFor(async () => {
    const list = await events(request);
    return list.length >= n ? list : undefined;
  }, what);

async function unreadTexts(request: Request): Promise<string[]> {
  const res = await request("GET", "/messages/unread?limit=100", { headers: AGENT });
  return ((await res.json()) as { messages: Envelope[] }).messages.map((m) => m.text);
}

describe("iMessage", () => {
  test("tapbacks by a friend and by the owner are events; a stranger's is not; edits and unsends change the message", async () => {
    const t = await deviceService();
    const hello = t.chat.writer.message({ chatGuid: GROUP_CHAT, from: FRIEND, text: "helo all" });
    const bye = t.chat.writer.message({ chatGuid: GROUP_CHAT, from: FRIEND, text: "regret this" });
    await waitFor(
      async () => ((await unreadTexts(t.request)).length === 2 ? true : undefined),
      "two messages",
    );
    const tapback = (from: string | null, type: number, emoji?: string) =>
      t.chat.writer.message({
        chatGuid: GROUP_CHAT,
        from,
        isFromMe: from === null,
        text: "",
        associatedMessageType: type,
        associatedMessageGuid: `p:0/${hello.guid}`,
        ...(emoji ? { associatedMessageEmoji: emoji } : {}),
      });
    tapback(FRIEND, 2001);
    tapback(STRANGER, 2000);
    tapback(null, 2006, "🎉");
    tapback(FRIEND, 3001);
    t.chat.writer.edit(hello.rowid, "hello all");
    t.chat.writer.unsend(bye.rowid);
    const list = await waitEvents(t.request, 5, "five visible events");
    expect(list.map((e) => [e.kind, e.sender.id, e.data])).toEqual([
      ["reaction.added", FRIEND, { emoji: "👍" }],
      ["reaction.added", "me", { emoji: "🎉" }],
      ["reaction.removed", FRIEND, { emoji: "👍" }],
      ["message.edited", FRIEND, { text: "hello all", previous_text: "helo all" }],
      ["message.deleted", FRIEND, {}],
    ]);
    expect(list.every((e) => e.channel_id === GROUP_CHAT && e.source === "device_messenger")).toBe(true);
    expect(await unreadTexts(t.request)).toEqual(["hello all"]);
    const deleted = list.at(-1)?.message_id as string;
    expect((await t.request("GET", `/messages/${deleted}`, { headers: AGENT })).status).toBe(404);
    // The tapback rows never become messages; another tick finds nothing new.
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "later" });
    await waitFor(async () => ((await unreadTexts(t.request)).includes("later") ? true : undefined), "later");
    expect(await events(t.request)).toHaveLength(5);
    expect(await unreadTexts(t.request)).toEqual(["hello all", "later"]);
  });
  test("edits made while gw was stopped are all found at start, more of them than one read batch", async () => {
    const t = await deviceService();
    const rows = Array.from({ length: 300 }, (_, i) =>
      t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `draft ${i}` }),
    );
    const count = (svc: typeof t.svc, sql: string) => (svc.store.db.query(sql).get() as { n: number }).n;
    await waitFor(
      async () => (count(t.svc, "SELECT COUNT(*) AS n FROM messages") === 300 ? true : undefined),
      "300 stored messages",
    );
    await t.svc.close();
    for (const [i, r] of rows.entries()) t.chat.writer.edit(r.rowid, `final ${i}`);
    const again = await t.start();
    const edited = "SELECT COUNT(*) AS n FROM events WHERE kind = 'message.edited'";
    await waitFor(async () => (count(again, edited) === 300 ? true : undefined), "300 edit events");
    const stale = "SELECT COUNT(*) AS n FROM messages WHERE text LIKE 'draft %'";
    expect(count(again, stale)).toBe(0);
  });
});

describe("Discord", () => {
  test("edits, deletes (one and bulk) and reactions become events; a stranger's reaction does not; replays store nothing twice", async () => {
    const { fake, ann, guild, general } = await discord.home();
    const sam = fake.user({ username: "sam_user", global_name: "Sam" });
    const dm = fake.dm(ann);
    const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
    const a = fake.message(general.id, { author: ann, content: "typo" });
    const b = fake.message(general.id, { author: ann, content: "two" });
    const c = fake.message(general.id, { author: ann, content: "three" });
    const d = fake.message(dm.id, { author: ann, content: "in the dm" });
    await waitFor(
      async () => ((await unreadTexts(gw.request)).length === 4 ? true : undefined),
      "four messages",
    );
    fake.edit(general.id, a.id as string, "typed");
    fake.react(general.id, a.id as string, ann, "👍");
    fake.react(general.id, a.id as string, sam, "😂");
    fake.react(dm.id, d.id as string, ann, "<:party:123456789012345678>");
    fake.react(general.id, a.id as string, ann, "👍", true);
    fake.remove(general.id, [b.id as string]);
    fake.remove(general.id, [c.id as string]);
    const list = await waitEvents(gw.request, 6, "six visible events");
    expect(list.map((e) => [e.kind, e.sender.display_name, e.data])).toEqual([
      ["message.edited", "Ann", { text: "typed", previous_text: "typo" }],
      ["reaction.added", "Ann", { emoji: "👍" }],
      ["reaction.added", "Ann", { emoji: "<:party:123456789012345678>" }],
      ["reaction.removed", "Ann", { emoji: "👍" }],
      ["message.deleted", "Ann", {}],
      ["message.deleted", "Ann", {}],
    ]);
    expect(await unreadTexts(gw.request)).toEqual(["typed", "in the dm"]);
    // A second, bulk delete of ids already deleted, and a MESSAGE_UPDATE that changed no content: nothing.
    fake.remove(general.id, [b.id as string, c.id as string]);
    fake.gateway.dispatch("MESSAGE_UPDATE", { ...a, content: "typed", embeds: [{ title: "x" }] });
    const e = fake.message(general.id, { author: ann, content: "fence" });
    await waitFor(
      async () => ((await unreadTexts(gw.request)).includes("fence") ? true : undefined),
      "fence",
    );
    expect(await events(gw.request)).toHaveLength(6);
    expect(e.id).toBeDefined();

    // A reaction while the socket is down is replayed by the RESUME, once; a frame repeated with the same
    // session and sequence is stored once.
    fake.gateway.drop();
    fake.react(general.id, e.id as string, ann, "❤️");
    await waitEvents(gw.request, 7, "the replayed reaction");
    const again = {
      op: 0,
      t: "MESSAGE_REACTION_ADD",
      s: 100_000,
      d: {
        user_id: ann.id,
        channel_id: general.id,
        guild_id: guild.id,
        message_id: e.id,
        emoji: { id: null, name: "🔥" },
      },
    };
    fake.gateway.sendRaw(JSON.stringify(again));
    fake.gateway.sendRaw(JSON.stringify(again));
    await waitEvents(gw.request, 8, "the repeated frame's reaction");
    fake.message(general.id, { author: ann, content: "fence two" });
    await waitFor(
      async () => ((await unreadTexts(gw.request)).includes("fence two") ? true : undefined),
      "fence two",
    );
    expect((await events(gw.request)).slice(6).map((x) => x.data.emoji)).toEqual(["❤️", "🔥"]);
    expect(fake.gateway.resumes).toBeGreaterThan(0);
  });

  test("two edits stamped in the same millisecond are two events; a repeated one is stored once", async () => {
    const { fake, ann, general } = await discord.home();
    const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
    const a = fake.message(general.id, { author: ann, content: "draft" });
    await waitFor(async () => ((await unreadTexts(gw.request)).length === 1 ? true : undefined), "draft");
    const stamp = "2026-11-26T19:41:40.496000+00:00";
    const first = { ...a, content: "draft 1", edited_timestamp: stamp };
    fake.gateway.dispatch("MESSAGE_UPDATE", first);
    fake.gateway.dispatch("MESSAGE_UPDATE", { ...a, content: "draft 2", edited_timestamp: stamp });
    // The first dispatch again (a replay: same stamp, same content) is the same edit, stored once.
    fake.gateway.dispatch("MESSAGE_UPDATE", first);
    const list = await waitEvents(gw.request, 2, "two edits");
    expect(list.map((e) => e.data)).toEqual([
      { text: "draft 1", previous_text: "draft" },
      { text: "draft 2", previous_text: "draft 1" },
    ]);
    fake.message(general.id, { author: ann, content: "fence" });
    await waitFor(
      async () => ((await unreadTexts(gw.request)).includes("fence") ? true : undefined),
      "fence",
    );
    expect(await events(gw.request)).toHaveLength(2);
    expect(await unreadTexts(gw.request)).toEqual(["draft 2", "fence"]);
  });
});
