/**
 * Issue 29: a Discord message's `raw` never holds the text, author or attachments of another message
 * (extensions.md §4). rawOf keeps the message's own fields and reduces every other message it quotes
 * (a reply's original, a forward's snapshot, an interaction's user, anything message-like nested in
 * free-form fields) to ids; toMessage stores that projection. The payloads: test/helpers/discord-messages.ts.
 */
import { describe, expect, test } from "bun:test";
import { asDiscordMessage, toMessage } from "../../src/connectors/community-chat/mapping.ts";
import { idsOf, rawOf } from "../../src/connectors/community-chat/raw.ts";
import {
  ANN,
  ATTACHMENT_URL,
  CANARY,
  CHANNEL,
  expectNoTrace,
  friend,
  friendsReply,
  GUILD,
  ORIGINAL,
  REPLY_REFERENCE,
  STRANGER,
  strangers,
} from "../helpers/discord-messages.ts";

describe("this message's own fields", () => {
  test("a message as the gateway sends it is kept whole, mentions as ids", () => {
    const m = friend({
      nonce: "abc",
      webhook_id: "1700000000000000001",
      application_id: "1700000000000000002",
      position: 3,
      attachments: [
        {
          id: "1500000000000000002",
          filename: "mine.png",
          size: 3,
          url: "https://cdn/x/mine.png",
          proxy_url: "https://media/x/mine.png",
          content_type: "image/png",
          width: 2,
          height: 2,
        },
      ],
      mentions: [{ id: "1100000000000000002", username: "bob", global_name: "Bob", bot: false }],
      mention_roles: ["1600000000000000002"],
      embeds: [
        {
          type: "rich",
          title: "my link",
          description: "my text",
          url: "https://example.com",
          author: { name: "Example", url: "https://example.com/a", icon_url: "https://example.com/i.png" },
          fields: [{ name: "n", value: "v", inline: true }],
          footer: { text: "foot" },
          image: { url: "https://example.com/p.png", width: 1, height: 1 },
        },
      ],
      components: [{ type: 1, components: [{ type: 2, style: 1, label: "Yes", custom_id: "yes" }] }],
      poll: {
        question: { text: "Lunch?" },
        answers: [{ answer_id: 1, poll_media: { text: "pizza", emoji: { id: null, name: "🍕" } } }],
        expiry: null,
        allow_multiselect: false,
        layout_type: 1,
      },
      reactions: [{ count: 1, me: false, emoji: { id: null, name: "👍" }, burst_colors: [] }],
      sticker_items: [{ id: "1800000000000000001", name: "wave", format_type: 1 }],
      message_reference: REPLY_REFERENCE,
      type: 19,
    });
    // Kept whole but its mentions, which are ids.
    expect(rawOf(m)).toEqual({ ...m, mentions: [{ id: "1100000000000000002" }] });
  });

  test("the fields gw reads are there: id, channel, guild, content, author, type", () => {
    const raw = rawOf(friend());
    expect(raw).toMatchObject({
      id: "1400000000000000099",
      channel_id: CHANNEL,
      guild_id: GUILD,
      content: "look at this",
      author: { id: ANN.id, username: ANN.username },
      type: 0,
    });
  });

  test("author, member, mentions, attachments and stickers keep their scalar fields, not nested objects", () => {
    const raw = rawOf(
      friend({
        author: { ...ANN, avatar_decoration_data: { asset: "a" }, primary_guild: { tag: CANARY } },
        member: { nick: "Annie", roles: ["1600000000000000001", { x: CANARY }], user: STRANGER },
        mentions: [{ ...ANN, member: { nick: CANARY } }],
        attachments: [
          {
            id: "1500000000000000002",
            filename: "clip.mp4",
            size: 3,
            url: "https://cdn/x/clip.mp4",
            clip_participants: [STRANGER],
            application: { name: CANARY },
          },
        ],
        stickers: [{ id: "1800000000000000001", name: "wave", format_type: 1, user: STRANGER }],
      }),
    );
    expectNoTrace(raw);
    expect(raw.author).toEqual(ANN);
    expect(raw.member).toEqual({ nick: "Annie", roles: ["1600000000000000001"] });
    // A mentioned user is an id: a reply that pings names the quoted author there (Discord does).
    expect(raw.mentions).toEqual([{ id: ANN.id }]);
    expect(raw.attachments).toEqual([
      { id: "1500000000000000002", filename: "clip.mp4", size: 3, url: "https://cdn/x/clip.mp4" },
    ]);
    expect(raw.stickers).toEqual([{ id: "1800000000000000001", name: "wave", format_type: 1 }]);
  });
});

describe("a message-like object in a field of scalars (attachments, mentions, stickers, activity...)", () => {
  test("is its ids, not its scalar fields", () => {
    const raw = rawOf(
      friend({
        attachments: [{ ...strangers(), filename: "evil-file.png", url: ATTACHMENT_URL }],
        mentions: [strangers()],
        sticker_items: [strangers()],
        activity: strangers(),
        application: strangers(),
        author: { ...ANN, quoted: strangers() },
      }),
    );
    expectNoTrace(raw);
    const ids = { message_id: ORIGINAL, channel_id: CHANNEL };
    expect(raw).toMatchObject({
      attachments: [ids],
      mentions: [ids],
      sticker_items: [ids],
      activity: ids,
      application: ids,
      author: ANN,
    });
  });
});

describe("another message is its ids", () => {
  test("a reply's referenced_message: message, channel and guild ids only", () => {
    const raw = rawOf(friendsReply(strangers({ guild_id: GUILD, member: { nick: CANARY } })));
    expectNoTrace(raw);
    expect(raw.referenced_message).toEqual({ message_id: ORIGINAL, channel_id: CHANNEL, guild_id: GUILD });
    expect(raw.message_reference).toEqual({
      type: 0,
      message_id: ORIGINAL,
      channel_id: CHANNEL,
      guild_id: GUILD,
    });
    expect(raw.content).toBe("look at this");
  });

  test("only the ids present are kept; a deleted original (null) stays null; junk is dropped", () => {
    expect(rawOf(friend({ referenced_message: strangers() })).referenced_message).toEqual({
      message_id: ORIGINAL,
      channel_id: CHANNEL,
    });
    expect(rawOf(friend({ referenced_message: null })).referenced_message).toBeNull();
    expect(rawOf(friend({ referenced_message: CANARY }))).not.toHaveProperty("referenced_message");
    expect(rawOf(friend({ referenced_message: { id: CANARY, content: CANARY } })).referenced_message).toEqual(
      {},
    );
  });

  test("a forward's snapshots: each is the ids of the forwarded message (from the forward's reference)", () => {
    const snapshot = { message: { ...strangers(), id: undefined, author: undefined } };
    const raw = rawOf(
      friend({
        content: "",
        flags: 1 << 14,
        message_reference: { type: 1, message_id: ORIGINAL, channel_id: CHANNEL, guild_id: GUILD },
        message_snapshots: [snapshot],
      }),
    );
    expectNoTrace(raw);
    expect(raw.message_snapshots).toEqual([{ message_id: ORIGINAL, channel_id: CHANNEL, guild_id: GUILD }]);
    expect(rawOf(friend({ message_snapshots: [snapshot, snapshot] })).message_snapshots).toEqual([{}, {}]);
    expect(rawOf(friend({ message_snapshots: { message: strangers() } }))).not.toHaveProperty(
      "message_snapshots",
    );
  });

  test("message_reference keeps its type and ids only", () => {
    const raw = rawOf(
      friend({
        message_reference: {
          type: 0,
          message_id: ORIGINAL,
          channel_id: CHANNEL,
          fail_if_not_exists: false,
          message: strangers(),
          content: CANARY,
        },
      }),
    );
    expectNoTrace(raw);
    expect(raw.message_reference).toEqual({ type: 0, message_id: ORIGINAL, channel_id: CHANNEL });
  });

  test("interaction and interaction_metadata: ids, type and command name; no user, no nested message", () => {
    const raw = rawOf(
      friend({
        interaction: {
          id: "1900000000000000001",
          type: 2,
          name: "ask",
          user: STRANGER,
          member: { nick: CANARY },
        },
        interaction_metadata: {
          id: "1900000000000000002",
          type: 5,
          user: STRANGER,
          authorizing_integration_owners: { "0": GUILD, "1": STRANGER.id },
          original_response_message_id: "1400000000000000010",
          triggering_interaction_metadata: {
            id: "1900000000000000003",
            type: 2,
            user: STRANGER,
            target_user: STRANGER,
            target_message_id: ORIGINAL,
            message: strangers(),
          },
          interacted_message_id: "1400000000000000011",
          message: strangers(),
        },
      }),
    );
    expectNoTrace(raw);
    expect(raw.interaction).toEqual({
      id: "1900000000000000001",
      type: 2,
      name: "ask",
      user_id: STRANGER.id,
    });
    expect(raw.interaction_metadata).toEqual({
      id: "1900000000000000002",
      type: 5,
      user_id: STRANGER.id,
      interacted_message_id: "1400000000000000011",
      original_response_message_id: "1400000000000000010",
      authorizing_integration_owners: { "0": GUILD, "1": STRANGER.id },
      triggering_interaction_metadata: {
        id: "1900000000000000003",
        type: 2,
        user_id: STRANGER.id,
        target_user_id: STRANGER.id,
        target_message_id: ORIGINAL,
      },
    });
  });

  test("a thread started from the message: its ids and type, not its name (another person's words)", () => {
    const raw = rawOf(
      friend({
        thread: {
          id: "2000000000000000001",
          type: 11,
          guild_id: GUILD,
          parent_id: CHANNEL,
          owner_id: STRANGER.id,
          name: CANARY,
          member: { user: STRANGER },
          thread_metadata: { archived: false },
          message_count: 3,
        },
      }),
    );
    expectNoTrace(raw);
    expect(raw.thread).toEqual({
      id: "2000000000000000001",
      type: 11,
      guild_id: GUILD,
      parent_id: CHANNEL,
      owner_id: STRANGER.id,
    });
  });

  test("resolved: the ids of what it resolves; call: participant ids", () => {
    const raw = rawOf(
      friend({
        resolved: {
          users: { [STRANGER.id]: STRANGER },
          members: { [STRANGER.id]: { nick: CANARY } },
          messages: { [ORIGINAL]: strangers() },
          attachments: { "1500000000000000001": { filename: "evil-file.png", url: ATTACHMENT_URL } },
          note: CANARY,
        },
        call: { participants: [STRANGER.id, CANARY], ended_timestamp: null, summary: CANARY },
      }),
    );
    expectNoTrace(raw);
    expect(raw.resolved).toEqual({
      users: [STRANGER.id],
      members: [STRANGER.id],
      messages: [ORIGINAL],
      attachments: ["1500000000000000001"],
    });
    expect(raw.call).toEqual({ participants: [STRANGER.id], ended_timestamp: null });
  });
});

describe("free-form fields (embeds, components, poll, reactions)", () => {
  test("a message-like object at any depth, or a value under a message key, is its ids", () => {
    const raw = rawOf(
      friend({
        embeds: [
          {
            title: "mine",
            fields: [{ name: "quote", value: "mine too", extra: { deep: [strangers()] } }],
            message: strangers(),
            messages: [strangers(), null, CANARY],
            footer: { text: "foot", message: null },
          },
        ],
        components: [{ type: 1, components: [{ type: 2, label: "ok", quoted: { x: { y: strangers() } } }] }],
        poll: { question: { text: "Lunch?" }, whatever: { message_snapshots: [{ message: strangers() }] } },
        reactions: [{ count: 1, emoji: { id: "2100000000000000001", name: "party", user: STRANGER } }],
      }),
    );
    expectNoTrace(raw);
    const ids = { message_id: ORIGINAL, channel_id: CHANNEL };
    expect(raw.embeds).toEqual([
      {
        title: "mine",
        fields: [{ name: "quote", value: "mine too", extra: { deep: [ids] } }],
        message: ids,
        messages: [ids, null],
        footer: { text: "foot", message: null },
      },
    ]);
    expect(raw.components).toEqual([
      { type: 1, components: [{ type: 2, label: "ok", quoted: { x: { y: ids } } }] },
    ]);
    // An object holding message_snapshots is itself message-like: its ids (none here).
    expect(raw.poll).toEqual({ question: { text: "Lunch?" }, whatever: {} });
    expect(raw.reactions).toEqual([
      { count: 1, emoji: { id: "2100000000000000001", name: "party", user: { id: STRANGER.id } } },
    ]);
  });

  test.each([
    ["content", { content: CANARY }],
    ["attachments", { attachments: [{ filename: "evil-file.png" }] }],
    ["embeds", { embeds: [{ description: CANARY }] }],
    ["an author that is a user", { author: STRANGER, note: CANARY }],
    ["sticker_items", { sticker_items: [], text: CANARY }],
    ["message_reference", { message_reference: {}, text: CANARY }],
  ])("an object with %s counts as a message (no id needed)", (_label, inner) => {
    const raw = rawOf(friend({ embeds: [{ title: "mine", quoted: inner }] }));
    expectNoTrace(raw);
    expect(raw.embeds).toEqual([{ title: "mine", quoted: {} }]);
  });

  test("an embed's own author (a name and url, not a user) is kept", () => {
    const embed = { title: "t", author: { name: "Site", url: "https://example.com" } };
    expect(rawOf(friend({ embeds: [embed] })).embeds).toEqual([embed]);
  });

  test("a components v2 Text Display is message-like too: its text is dropped (a message's text is `content`)", () => {
    const raw = rawOf(friend({ components: [{ type: 10, id: 1, content: "text" }] }));
    expect(raw.components).toEqual([{}]);
  });
});

describe("fields raw.ts does not know", () => {
  test("kept only when they cannot carry text: numbers, booleans, null, snowflakes", () => {
    const raw = rawOf(
      friend({
        new_flag: 7,
        new_bool: true,
        new_null: null,
        new_id: "2200000000000000001",
        quoted_text: CANARY,
        quoted: strangers(),
        quotes: [strangers()],
        message: strangers(),
        shared_client_theme: { colors: ["ff0000"] },
      }),
    );
    expectNoTrace(raw);
    expect(raw).toMatchObject({ new_flag: 7, new_bool: true, new_null: null, new_id: "2200000000000000001" });
    for (const k of ["quoted_text", "quoted", "quotes", "message", "shared_client_theme"])
      expect(raw).not.toHaveProperty(k);
  });

  test("keys like __proto__ and constructor are plain fields, never the prototype", () => {
    const m = JSON.parse(
      `{"id":"1400000000000000099","channel_id":"${CHANNEL}","content":"hi","__proto__":{"content":"${CANARY}"},"constructor":5,"toString":{"x":1}}`,
    ) as Record<string, unknown>;
    const raw = rawOf(m);
    expectNoTrace(raw);
    expect(Object.getPrototypeOf(raw)).toBe(Object.prototype);
    expect(Object.hasOwn(raw, "__proto__")).toBe(false);
    expect(Object.getOwnPropertyDescriptor(raw, "constructor")?.value).toBe(5);
    expect(Object.hasOwn(raw, "toString")).toBe(false);
  });
});

describe("idsOf", () => {
  test("message_id from message_id or id; only snowflakes", () => {
    expect(idsOf({ message_id: ORIGINAL, id: "1", channel_id: CHANNEL })).toEqual({
      message_id: ORIGINAL,
      channel_id: CHANNEL,
    });
    expect(idsOf({ id: ORIGINAL, guild_id: GUILD })).toEqual({ message_id: ORIGINAL, guild_id: GUILD });
    expect(idsOf({ id: CANARY, channel_id: 5, guild_id: null })).toEqual({});
    expect(idsOf([ORIGINAL])).toBeUndefined();
    expect(idsOf(null)).toBeUndefined();
  });
});

describe("toMessage stores the projection", () => {
  test("a reply to a stranger: text, sender and reply_to as before, raw without the stranger", () => {
    const m = asDiscordMessage(friendsReply());
    if (!m) throw new Error("the reply should be a message gw can use");
    const out = toMessage(m, "channel", []);
    expect(out.text).toBe("look at this");
    expect(out.sender).toEqual({ id: ANN.id, displayName: "Annie" });
    expect(out.replyToPlatformId).toBe(ORIGINAL);
    expectNoTrace(out.raw);
    expect(out.raw.referenced_message).toEqual({ message_id: ORIGINAL, channel_id: CHANNEL });
  });

  test("a forward: raw holds the reference and the snapshot's ids only", () => {
    const m = asDiscordMessage(
      friend({
        content: "",
        message_reference: { type: 1, message_id: ORIGINAL, channel_id: CHANNEL, guild_id: GUILD },
        message_snapshots: [{ message: strangers() }],
      }),
    );
    if (!m) throw new Error("the forward should be a message gw can use");
    const out = toMessage(m, "channel", []);
    expect(out.replyToPlatformId).toBeNull();
    expectNoTrace(out.raw);
    expect(out.raw.message_snapshots).toEqual([
      { message_id: ORIGINAL, channel_id: CHANNEL, guild_id: GUILD },
    ]);
  });
});
