/**
 * Issue 29: a Discord message's `raw` never holds the text, author or attachments of another message
 * (extensions.md §4). This file: rawOf keeps the message's own fields (scalar fields of its author,
 * member, mentions, files and stickers), reduces a message-like object found in a field of scalars or at
 * any depth of a free-form field (embeds, components, poll, reactions) to its ids, keeps unknown fields
 * only when they cannot carry text, and idsOf. Another message quoted by name (a reply's original, a
 * forward, an interaction, a thread, resolved data) and what toMessage stores: discord-raw-quoted.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { idsOf, rawOf } from "../../src/connectors/community-chat/raw.ts";
import {
  ANN,
  ATTACHMENT_URL,
  CANARY,
  CHANNEL,
  expectNoTrace,
  friend,
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
