/** The pure half of the Discord connector: snowflakes, payload → message mapping, channel ids. */
import { describe, expect, test } from "bun:test";
import {
  asDiscordMessage,
  channelFor,
  classify,
  type DiscordMessage,
  displayName,
  kindOf,
  kindOfChannelId,
  toMessage,
} from "../../src/connectors/community-chat/mapping.ts";
import {
  DISCORD_EPOCH_MS,
  isLater,
  isSnowflake,
  later,
  snowflakeAt,
  snowflakeTime,
} from "../../src/connectors/community-chat/snowflake.ts";

const AT = Date.UTC(2026, 10, 24, 9, 30, 15, 123);
const id = (ms: number, n = 0) => ((BigInt(ms - DISCORD_EPOCH_MS) << 22n) | BigInt(n)).toString();

function payload(over: Partial<DiscordMessage> & Record<string, unknown> = {}): DiscordMessage {
  return {
    id: id(AT, 7),
    channel_id: "1300000000000000001",
    guild_id: "1200000000000000001",
    channel_type: 0,
    type: 0,
    author: { id: "1100000000000000001", username: "ann_user", global_name: "Ann Global" },
    member: { nick: "Annie" },
    content: "hello",
    attachments: [],
    ...over,
  } as DiscordMessage;
}

describe("snowflakes", () => {
  test("the time of a snowflake is its top bits after the Discord epoch, to the millisecond", () => {
    expect(snowflakeTime(id(AT, 4095))).toBe(AT);
    expect(snowflakeTime("175928847299117063")).toBe(Date.UTC(2016, 3, 30, 11, 18, 25, 796));
  });

  test("snowflakeAt is the smallest id of that millisecond", () => {
    expect(snowflakeAt(AT)).toBe(id(AT, 0));
    expect(isLater(id(AT, 1), snowflakeAt(AT))).toBe(true);
    expect(isLater(id(AT - 1, 4095), snowflakeAt(AT))).toBe(false);
    expect(snowflakeAt(0)).toBe("0");
  });

  test("ids compare as numbers, not as text", () => {
    expect(isLater("1000000000000000000", "999999999999999999")).toBe(true);
    expect(isLater("999999999999999999", "1000000000000000000")).toBe(false);
    expect(isLater("5", "5")).toBe(false);
    expect(later(null, "7")).toBe("7");
    expect(later("10", "9")).toBe("10");
    expect(later("9", null)).toBe("9");
  });

  test.each([
    ["1300000000000000001", true],
    ["0", false],
    ["01", false],
    ["12a", false],
    ["", false],
    ["99999999999999999999", false],
    [1300000000, false],
  ])("isSnowflake(%p) is %p", (v, ok) => {
    expect(isSnowflake(v)).toBe(ok);
  });
});

describe("channels", () => {
  test.each([
    [{ channel_type: 0 }, "channel"],
    [{ channel_type: 11 }, "channel"],
    [{ channel_type: 1, guild_id: undefined }, "dm"],
    // A group DM has no guild but several people: a group, never one-to-one.
    [{ channel_type: 3, guild_id: undefined }, "channel"],
    [{ channel_type: undefined, guild_id: undefined }, "dm"],
    [{ channel_type: undefined }, "channel"],
  ])("%p posts in a %s", (over, kind) => {
    expect(kindOf(payload(over))).toBe(kind as "dm" | "channel");
  });

  test("DMs and channels (threads too) get the spec's ids and types", () => {
    expect(channelFor("dm", "42")).toEqual({ id: "community_chat:dm:42", type: "dm", platformRef: "42" });
    expect(channelFor("channel", "43")).toEqual({
      id: "community_chat:channel:43",
      type: "group",
      platformRef: "43",
    });
    expect(kindOfChannelId("community_chat:dm:42")).toBe("dm");
    expect(kindOfChannelId("community_chat:channel:43")).toBe("channel");
    expect(kindOfChannelId("+15555550100")).toBeNull();
  });
});

describe("messages", () => {
  test("a guild message maps to every envelope field", () => {
    const p = payload({ message_reference: { type: 0, message_id: id(AT - 5000) }, type: 19 });
    const staged = [{ id: "att_X", mime: "image/png", sizeBytes: 3, fileName: "att_X", platformRef: "9" }];
    expect(toMessage(p, "channel", staged)).toEqual({
      source: "community_chat",
      platformId: p.id,
      channel: {
        id: "community_chat:channel:1300000000000000001",
        type: "group",
        platformRef: "1300000000000000001",
      },
      sender: { id: "1100000000000000001", displayName: "Annie" },
      text: "hello",
      replyToPlatformId: id(AT - 5000),
      timestampMs: AT,
      attachments: staged,
      raw: p as unknown as Record<string, unknown>,
      direction: "inbound",
    });
  });

  test("a forward quotes nothing: no reply_to", () => {
    const p = payload({ message_reference: { type: 1, message_id: id(AT - 5000) } });
    expect(toMessage(p, "channel", []).replyToPlatformId).toBeNull();
  });

  test("display name: member nick, else global name, else username", () => {
    expect(displayName(payload())).toBe("Annie");
    expect(displayName(payload({ member: { nick: null } }))).toBe("Ann Global");
    expect(
      displayName(payload({ member: undefined, author: { id: "1", username: "u", global_name: null } })),
    ).toBe("u");
  });

  test.each([
    [{}, "deliver"],
    [{ type: 19 }, "deliver"],
    [
      { content: "", attachments: [{ id: "9", filename: "a.png", size: 1, url: "http://x/a.png" }] },
      "deliver",
    ],
    [{ author: { id: "1999999999999999999", username: "gw-bot" } }, "own"],
    [{ type: 7 }, "system"],
    [{ type: 18 }, "system"],
    [{ content: "   " }, "empty"],
  ])("%p is %s", (over, verdict) => {
    expect(classify(payload(over as Partial<DiscordMessage>), "1999999999999999999")).toBe(
      verdict as "deliver",
    );
  });

  test.each([
    null,
    "text",
    { id: "x", channel_id: "1", author: { id: "1" } },
    { id: "1", channel_id: "1" },
    { id: "1", channel_id: "1", author: { id: "abc" } },
    { id: "1", channel_id: "1", author: { id: "1" }, attachments: "nope" },
  ])("%p is not a message gw can use", (v) => {
    expect(asDiscordMessage(v)).toBeNull();
  });
});
