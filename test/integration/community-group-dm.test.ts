/**
 * A Discord group DM (channel type 3) is a group, never a one-to-one chat (extensions.md §4): its messages
 * reach agents with channel_type `group` in a `community_chat:channel:` channel, the channel list says so
 * (so neither permission prompts nor phone commands, which go to one-to-one chats only, go there), and an
 * edit there follows its message. Through the real connector and discord.js against the fake Discord.
 */
import { expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import type { GwEvent } from "../../src/core/event.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT } from "../helpers/service.ts";

const discord = fakeDiscords();

test("a group DM's messages are a group's; a one-to-one DM's are a dm's", async () => {
  const fake = await discord.start();
  const ann = fake.user({ username: "ann_user", global_name: "Ann" });
  const sam = fake.user({ username: "sam_user", global_name: "Sam" });
  const group = fake.groupDm([ann, sam]);
  const dm = fake.dm(ann);
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
  const inGroup = fake.message(group.id, { author: ann, content: "hi both" });
  fake.message(dm.id, { author: ann, content: "just you" });
  const unread = async () =>
    (
      (await (await gw.request("GET", "/messages/unread?limit=100", { headers: AGENT })).json()) as {
        messages: Envelope[];
      }
    ).messages;
  const list = await waitFor(async () => {
    const m = await unread();
    return m.length === 2 ? m : undefined;
  }, "two messages");
  expect(list.map((m) => [m.text, m.channel_type, m.channel_id])).toEqual([
    ["hi both", "group", `community_chat:channel:${group.id}`],
    ["just you", "dm", `community_chat:dm:${dm.id}`],
  ]);
  const channels = (await (await gw.request("GET", "/channels", { headers: AGENT })).json()) as {
    channels: { channel_id: string; channel_type: string }[];
  };
  expect(channels.channels.map((c) => [c.channel_id, c.channel_type]).sort()).toEqual([
    [`community_chat:channel:${group.id}`, "group"],
    [`community_chat:dm:${dm.id}`, "dm"],
  ]);
  fake.edit(group.id, inGroup.id as string, "hi you two");
  const events = await waitFor(async () => {
    const r = await gw.request("GET", "/events", { headers: AGENT });
    const e = ((await r.json()) as { events: GwEvent[] }).events;
    return e.length === 1 ? e : undefined;
  }, "the edit");
  expect(events[0]).toMatchObject({
    kind: "message.edited",
    channel_id: `community_chat:channel:${group.id}`,
  });
});
