/**
 * GET /channels (extensions.md §2): channels with a visible message, newest activity first, with the
 * asking agent's unread count, kept in step with ingest, read marks and deletes; names from chat.db (the
 * real iMessage connector on a chat.db written as Messages writes it) and from Discord's dispatches (the
 * fake Discord with the real discord.js), renames included.
 */
import { describe, expect, test } from "bun:test";
import type { Envelope, Source } from "../../src/core/envelope.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { deviceService, FRIEND, FRIEND_CHAT, GROUP_CHAT, STRANGER } from "../helpers/device.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { inbound } from "../helpers/messages.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH, testService } from "../helpers/service.ts";

type Channel = {
  channel_id: string;
  source: Source;
  channel_type: string;
  name: string;
  last_message_at: string;
  unread_count: number;
};

type Requester = { request: Awaited<ReturnType<typeof testService>>["request"] };

async function channels(t: Requester, query = "", agent = "agent-a"): Promise<Channel[]> {
  const res = await t.request("GET", `/channels${query}`, { headers: { ...AUTH, "x-agent-id": agent } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { channels: Channel[] }).channels;
}

const T0 = Date.UTC(2026, 10, 1);
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

const dm = { id: "+15555550100", type: "dm" as const, platformRef: "any;-;+15555550100" };
const group = { id: "any;+;chat1", type: "group" as const, platformRef: "any;+;chat1" };
const discord = {
  id: "community_chat:channel:900000000000000001",
  type: "group" as const,
  platformRef: "900000000000000001",
};
const ann = { id: "+15555550100", displayName: "+15555550100" };
const stranger = { id: "+15555550199", displayName: "+15555550199" };

function seedWorld(t: Awaited<ReturnType<typeof testService>>) {
  const msg = (o: Partial<NormalizedMessage>) => inbound({ channel: dm, sender: ann, ...o });
  const [a1, a2, a3] = t.seed([
    msg({ timestampMs: T0 + 1000, platformId: "a1" }),
    msg({ timestampMs: T0 + 2000, platformId: "a2" }),
    msg({ timestampMs: T0 + 5000, platformId: "a3" }),
  ]);
  // A group where only a stranger spoke: quarantined, so not listed.
  t.seed([msg({ channel: group, sender: stranger, timestampMs: T0 + 9000, platformId: "g1" })]);
  // A Discord channel with only gw's own message: visible, nothing unread.
  t.svc.ingest({
    source: "community_chat",
    cursor: null,
    messages: [
      inbound({
        source: "community_chat",
        channel: discord,
        sender: { id: "bot", displayName: "gw" },
        direction: "outbound",
        timestampMs: T0 + 3000,
        platformId: "900000000000000010",
      }),
    ],
  });
  return { a1: a1 as string, a2: a2 as string, a3: a3 as string };
}

const del = (t: Awaited<ReturnType<typeof testService>>, platformId: string) =>
  t.svc.ingest({
    source: "device_messenger",
    messages: [],
    cursor: null,
    changes: [
      {
        source: "device_messenger",
        kind: "delete",
        targetPlatformId: platformId,
        timestampMs: T0 + 60_000,
        dedupeKey: `test:delete:${platformId}`,
      },
    ],
  });

describe("GET /channels", () => {
  test("lists channels with a visible message, newest first, with each agent's own unread count", async () => {
    const t = await testService();
    const { a1, a2 } = seedWorld(t);
    expect(await channels(t)).toEqual([
      {
        channel_id: dm.id,
        source: "device_messenger",
        channel_type: "dm",
        // No connector named it here: the channel's id (the real connectors' names are tested below).
        name: dm.id,
        last_message_at: at(5),
        unread_count: 3,
      },
      {
        channel_id: discord.id,
        source: "community_chat",
        channel_type: "group",
        name: discord.id,
        last_message_at: at(3),
        unread_count: 0,
      },
    ]);
    const marked = await t.request("POST", "/messages/mark_read", {
      headers: AGENT,
      body: { message_ids: [a1, a2, a1] },
    });
    expect(marked.status).toBe(200);
    expect((await channels(t)).map((c) => c.unread_count)).toEqual([1, 0]);
    expect((await channels(t, "", "agent-b")).map((c) => c.unread_count)).toEqual([3, 0]);
    expect((await channels(t, "?source=community_chat")).map((c) => c.channel_id)).toEqual([discord.id]);
    expect((await channels(t, "?limit=1")).map((c) => c.channel_id)).toEqual([dm.id]);
    // A person's one-to-one channels (beyond extensions.md; the phone approval's targets): never a group.
    t.seed([inbound({ channel: group, sender: ann, timestampMs: T0 + 8000 })]);
    expect((await channels(t, "?person_id=ann")).map((c) => c.channel_id)).toEqual([dm.id]);
    expect(await channels(t, "?person_id=ann&source=community_chat")).toEqual([]);
    expect(await channels(t, "?person_id=nobody")).toEqual([]);
  });

  test("a deleted message leaves the counts and the newest activity; a channel with none visible leaves the list", async () => {
    const t = await testService();
    const { a1, a3 } = seedWorld(t);
    await t.request("POST", "/messages/mark_read", { headers: AGENT, body: { message_ids: [a1, a3] } });
    del(t, "a3");
    const dmOf = async (agent?: string) => (await channels(t, "", agent)).find((c) => c.channel_id === dm.id);
    expect(await dmOf()).toMatchObject({
      channel_id: dm.id,
      last_message_at: at(2),
      unread_count: 1,
    });
    expect(await dmOf("agent-b")).toMatchObject({ unread_count: 2 });
    del(t, "a1");
    del(t, "a2");
    expect((await channels(t)).map((c) => c.channel_id)).toEqual([discord.id]);
    // A new message brings the channel back, counted from what is visible.
    t.seed([inbound({ channel: dm, sender: ann, timestampMs: T0 + 7000 })]);
    expect(await dmOf()).toMatchObject({
      last_message_at: at(7),
      unread_count: 1,
    });
  });

  test("names: the platform's, else the people's (allowlist display names first), read as the allowlist is now", async () => {
    const t = await testService();
    seedWorld(t);
    t.seed([inbound({ channel: group, sender: ann, timestampMs: T0 + 8000, platformId: "g2" })]);
    const names = (list: Channel[]) => Object.fromEntries(list.map((c) => [c.channel_id, c.name]));
    const name = (text: string, participants: string[]) =>
      t.svc.ingest({
        source: "device_messenger",
        messages: [],
        cursor: null,
        channelNames: [
          { channelId: group.id, source: "device_messenger", type: "group", name: text, participants },
        ],
      });
    name("", [ann.id, stranger.id]);
    expect(names(await channels(t))[group.id]).toBe("Ann, +15555550199");
    name("Book club", [ann.id]);
    expect(names(await channels(t))[group.id]).toBe("Book club");
  });

  test("refusals: no X-Agent-ID 400, a bad limit or source 400, no bearer 401", async () => {
    const t = await testService();
    const noAgent = await t.request("GET", "/channels", { headers: AUTH });
    expect([noAgent.status, ((await noAgent.json()) as { error: { code: string } }).error.code]).toEqual([
      400,
      "AGENT_ID_REQUIRED",
    ]);
    for (const q of ["?limit=0", "?limit=501", "?limit=x", "?source=sms"]) {
      const res = await t.request("GET", `/channels${q}`, { headers: AGENT });
      expect([q, res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([
        q,
        400,
        "VALIDATION_FAILED",
      ]);
    }
    expect((await t.request("GET", "/channels", { headers: { "x-agent-id": "a" } })).status).toBe(401);
  });
});

describe("names from the platforms", () => {
  const discord = fakeDiscords();

  test("iMessage: a one-to-one chat by its person, a group by its name, else its people; a rename shows", async () => {
    const t = await deviceService();
    const unnamed = "any;+;chat-unnamed";
    t.chat.writer.chat({
      guid: unnamed,
      style: 43,
      chatIdentifier: "chat-unnamed",
      participants: [FRIEND, STRANGER],
    });
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "one" });
    t.chat.writer.message({ chatGuid: GROUP_CHAT, from: FRIEND, text: "two" });
    t.chat.writer.message({ chatGuid: unnamed, from: FRIEND, text: "three" });
    const named = (want: string) =>
      waitFor(async () => {
        const list = await channels(t);
        const byId = Object.fromEntries(list.map((c) => [c.channel_id, c.name]));
        return list.length === 3 && Object.values(byId).includes(want) ? byId : undefined;
      }, `a channel named ${want}`);
    expect(await named("Trip")).toEqual({
      [FRIEND]: "Ann",
      [GROUP_CHAT]: "Trip",
      [unnamed]: `Ann, ${STRANGER}`,
    });
    t.chat.writer.renameChat(GROUP_CHAT, "Trip 2027", FRIEND);
    expect((await named("Trip 2027"))[GROUP_CHAT]).toBe("Trip 2027");
  });

  test("Discord: guild #channel, guild #channel › thread, @username; renames of a guild and a channel show", async () => {
    const { fake, ann, guild, general } = await discord.home();
    const thread = fake.thread(guild.id, general.id, { name: "plans" });
    const dmChannel = fake.dm(ann);
    const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
    for (const id of [general.id, thread.id]) fake.message(id, { author: ann, content: `in ${id}` });
    await waitFor(async () => ((await channels(gw)).length === 2 ? true : undefined), "two channels");
    // Written while gw was away: the DM is caught up through REST history, and named from it.
    await gw.restart(
      () => void fake.message(dmChannel.id, { author: ann, content: "while away", dispatch: false }),
    );
    const names = (want: string) =>
      waitFor(async () => {
        const list = await channels(gw);
        const got = list.map((c) => c.name).sort();
        return list.length === 3 && got.includes(want) ? got : undefined;
      }, `a channel named ${want}`);
    expect(await names("Home #general")).toEqual(["@ann_user", "Home #general", "Home #general › plans"]);
    fake.rename(guild.id, "House");
    expect(await names("House #general")).toEqual(["@ann_user", "House #general", "House #general › plans"]);
    fake.rename(general.id, "lobby");
    expect(await names("House #lobby")).toEqual(["@ann_user", "House #lobby", "House #lobby › plans"]);
    const unread = await gw.request("GET", "/messages/unread", { headers: AGENT });
    expect(((await unread.json()) as { messages: Envelope[] }).messages).toHaveLength(3);
  });
});
