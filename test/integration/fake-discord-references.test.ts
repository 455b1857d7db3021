/**
 * The fake Discord sends replies and forwards as Discord does, and a plain discord.js client reads them
 * so: a reply (type 19, reference type 0) carries `referenced_message`, the original as it is now (null
 * once deleted), in MESSAGE_CREATE and in REST history and single-message answers; a forward (type 0,
 * reference type 1, empty content, flag HAS_SNAPSHOT) carries one snapshot of the original's content,
 * embeds and attachments, frozen when forwarded, and no author.
 */
import { expect, test } from "bun:test";
import { Events, type Message, MessageReferenceType, Routes } from "discord.js";
import { startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { fakeDiscordClients, loginReady } from "../helpers/discord-client.ts";
import { waitFor } from "../helpers/process.ts";

const newClient = fakeDiscordClients();

async function setUp() {
  const fake = await startFakeDiscord();
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const sam = fake.user({ username: "sam", global_name: "Sam" });
  const guild = fake.guild({ name: "Home" });
  const general = fake.channel(guild.id, { name: "general" });
  const other = fake.channel(guild.id, { name: "other" });
  const client = newClient(fake);
  const messages: Message[] = [];
  const raw: Record<string, unknown>[] = [];
  client.on(Events.MessageCreate, (m) => void messages.push(m));
  client.on("raw", (p: { t?: string; d?: Record<string, unknown> }) => {
    if (p.t === "MESSAGE_CREATE" && p.d) raw.push(p.d);
  });
  await loginReady(client);
  const got = (id: string) =>
    waitFor(() => {
      const m = messages.find((x) => x.id === id);
      const d = raw.find((x) => x.id === id);
      return m && d ? { m, d } : undefined;
    }, `message ${id}`);
  const history = (channelId: string) =>
    client.rest.get(Routes.channelMessages(channelId)) as Promise<Record<string, unknown>[]>;
  return { fake, client, ann, sam, guild, general, other, got, history };
}

test("a reply carries its original, author, text and files included; null once the original is deleted", async () => {
  const s = await setUp();
  const original = s.fake.message(s.general.id, {
    author: s.sam,
    content: "the original",
    attachments: [{ filename: "a.txt", data: "abc" }],
  });
  const reply = s.fake.message(s.general.id, {
    author: s.ann,
    content: "a reply",
    replyTo: original.id as string,
  });
  const { m, d } = await s.got(reply.id as string);
  expect(d).toMatchObject({
    type: 19,
    message_reference: { type: 0, message_id: original.id, channel_id: s.general.id, guild_id: s.guild.id },
    referenced_message: {
      id: original.id,
      channel_id: s.general.id,
      author: { id: s.sam.id, username: "sam" },
      content: "the original",
      attachments: [{ filename: "a.txt", size: 3 }],
      type: 0,
    },
  });
  expect(d.referenced_message).not.toHaveProperty("member");
  // discord.js reads it as Discord's: the reference, the replied user, the original in the channel's cache.
  expect(m.reference).toMatchObject({ messageId: original.id, type: MessageReferenceType.Default });
  expect(m.mentions.repliedUser?.id).toBe(s.sam.id);
  expect((await m.fetchReference()).content).toBe("the original");

  // REST: history and the single message resolve the original as it is now.
  s.fake.edit(s.general.id, original.id as string, "the original, edited");
  const item = (await s.history(s.general.id)).find((x) => x.id === reply.id);
  expect(item?.referenced_message).toMatchObject({ id: original.id, content: "the original, edited" });
  s.fake.remove(s.general.id, [original.id as string]);
  const after = (await s.history(s.general.id)).find((x) => x.id === reply.id);
  expect(after).toHaveProperty("referenced_message", null);
  const one = (await s.client.rest.get(Routes.channelMessage(s.general.id, reply.id as string))) as Record<
    string,
    unknown
  >;
  expect(one).toHaveProperty("referenced_message", null);
  // The stored form and a message that is not a reply have no referenced_message.
  expect(s.fake.history(s.general.id).some((x) => "referenced_message" in x)).toBe(false);
  const plain = s.fake.message(s.general.id, { author: s.ann, content: "plain" });
  expect((await s.got(plain.id as string)).d).not.toHaveProperty("referenced_message");
});

test("a forward: reference type 1, empty content, HAS_SNAPSHOT, one frozen snapshot without author", async () => {
  const s = await setUp();
  const original = s.fake.message(s.general.id, {
    author: s.sam,
    content: "worth sharing",
    attachments: [{ filename: "b.png", contentType: "image/png", data: "png" }],
  });
  const forward = s.fake.message(s.other.id, {
    author: s.ann,
    content: "ignored: a forward has no content of its own",
    forward: { channelId: s.general.id, messageId: original.id as string },
  });
  const { m, d } = await s.got(forward.id as string);
  expect(d).toMatchObject({
    type: 0,
    content: "",
    attachments: [],
    flags: 1 << 14,
    message_reference: { type: 1, message_id: original.id, channel_id: s.general.id, guild_id: s.guild.id },
  });
  expect(d).not.toHaveProperty("referenced_message");
  const snapshots = d.message_snapshots as { message: Record<string, unknown> }[];
  expect(snapshots).toHaveLength(1);
  expect(Object.keys(snapshots[0]?.message ?? {}).sort()).toEqual(
    [
      "attachments",
      "components",
      "content",
      "edited_timestamp",
      "embeds",
      "flags",
      "mention_roles",
      "mentions",
      "timestamp",
      "type",
    ].sort(),
  );
  expect(snapshots[0]?.message).toMatchObject({
    type: 0,
    content: "worth sharing",
    attachments: [{ filename: "b.png", content_type: "image/png" }],
    timestamp: original.timestamp,
  });
  // discord.js builds the snapshot as a message of the original's id and channel.
  expect(m.reference).toMatchObject({ messageId: original.id, type: MessageReferenceType.Forward });
  expect(m.messageSnapshots.get(original.id as string)?.content).toBe("worth sharing");

  // Frozen: editing or deleting the original changes nothing in the forward's history item.
  s.fake.edit(s.general.id, original.id as string, "edited later");
  s.fake.remove(s.general.id, [original.id as string]);
  const item = (await s.history(s.other.id)).find((x) => x.id === forward.id);
  const frozen = (item?.message_snapshots ?? []) as { message: { content: string } }[];
  expect(frozen[0]?.message.content).toBe("worth sharing");
  expect(() =>
    s.fake.message(s.other.id, { author: s.ann, forward: { channelId: s.general.id, messageId: "1" } }),
  ).toThrow("no message 1");
});
