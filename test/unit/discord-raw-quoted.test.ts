/**
 * Issue 29: a Discord message's `raw` never holds the text, author or attachments of another message
 * (extensions.md §4). This file: the fields that name another message (a reply's referenced_message, a
 * forward's snapshots, message_reference, interactions and their users, a thread, resolved data, a call)
 * are reduced to ids, and toMessage stores that projection. The message's own fields and free-form ones:
 * discord-raw.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { asDiscordMessage, toMessage } from "../../src/connectors/community-chat/mapping.ts";
import { rawOf } from "../../src/connectors/community-chat/raw.ts";
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
  STRANGER,
  strangers,
} from "../helpers/discord-messages.ts";

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
