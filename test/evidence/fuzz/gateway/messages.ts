/**
 * A message payload and what may go in each of its fields: `baseMessage` is a well-formed MESSAGE_CREATE
 * of the fake world; `wellTypedFields` are hostile values of the types Discord documents (such a message
 * is stored, with exactly what it carried); `messageFields` are anything at all, by field path.
 */
import fc from "fast-check";
import type { FakeUser } from "../../../../src/demo/fake-discord/server.ts";
import { plainMessageFields } from "../../../helpers/discord-messages.ts";
import { nastyString } from "../arbitraries.ts";
import type { World } from "./run.ts";
import {
  FILENAMES,
  hostileAttachment,
  hostileUrls,
  hugeMarker,
  type Json,
  junk,
  pastSnowflake,
  SIZES,
  STORED_ID,
} from "./values.ts";

export function baseMessage(w: World, id: string, where: string, who: string): Json {
  const channel = { general: w.general, thread: w.thread, dm: w.dm }[where] as { id: string };
  const author = { friend: w.friend, stranger: w.stranger, mallory: w.mallory }[who] as FakeUser;
  const inGuild = channel !== w.dm;
  return {
    id,
    channel_id: channel.id,
    author: { id: author.id, username: author.username, global_name: author.global_name, discriminator: "0" },
    content: `hostile ${id}`,
    timestamp: new Date().toISOString(),
    ...plainMessageFields(),
    ...(inGuild
      ? { guild_id: w.guild.id, channel_type: 0, member: { nick: null, roles: [], joined_at: "2026-01-01" } }
      : { channel_type: 1 }),
  };
}

/** Hostile values of the types Discord documents: such a message is stored, with exactly what it carried. */
export function wellTypedFields(w: World) {
  const name = fc.oneof(nastyString, fc.constant(null));
  return {
    channel_id: fc.oneof(pastSnowflake, fc.constantFrom(w.general.id, w.thread.id, w.dm.id)),
    guild_id: fc.oneof(pastSnowflake, fc.constant(null)),
    channel_type: fc.constantFrom(0, 1, 3, 5, 11, 15, 99),
    type: fc.constantFrom(0, 19),
    "author.id": fc.oneof(pastSnowflake, fc.constantFrom(w.friend.id, w.stranger.id)),
    "author.username": nastyString,
    "author.global_name": name,
    member: fc.constantFrom(null, {}),
    "member.nick": name,
    content: fc.oneof(nastyString, hugeMarker),
    attachments: fc.array(
      fc.record({
        id: fc.oneof(pastSnowflake, nastyString),
        filename: fc.oneof(fc.constantFrom(...FILENAMES), nastyString),
        size: fc.oneof(fc.constantFrom(...SIZES), fc.nat()),
        url: fc.constantFrom(...hostileUrls(w.fake.origin)),
        content_type: name,
      }),
      { maxLength: 3 },
    ),
    message_reference: fc.record({
      message_id: fc.oneof(pastSnowflake, fc.constant(STORED_ID)),
      channel_id: pastSnowflake,
    }),
    timestamp: nastyString,
    nonce: nastyString,
    embeds: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 3 }),
  };
}

/** Field paths of a message payload and what to put there. */
export function messageFields(w: World) {
  const ids = fc.constantFrom(w.general.id, w.thread.id, w.dm.id);
  return {
    id: fc.oneof(junk, fc.constant(STORED_ID), pastSnowflake),
    channel_id: fc.oneof(junk, ids, pastSnowflake),
    guild_id: fc.oneof(junk, pastSnowflake, fc.constant(w.guild.id)),
    channel_type: fc.oneof(junk, fc.constantFrom(0, 1, 3, 5, 11, 15, 99, -1, "1")),
    type: fc.oneof(junk, fc.constantFrom(0, 7, 19, 20, 46, -1, 1.5, "0")),
    author: fc.oneof(
      junk,
      fc.constantFrom<unknown>(
        { username: "no id" },
        { id: null, username: "null id" },
        { id: w.friend.id },
        { id: w.fake.bot.id, username: "bot", bot: true },
        { id: Number(w.friend.id), username: "number id" },
      ),
    ),
    "author.id": fc.oneof(junk, fc.constantFrom(w.friend.id, w.stranger.id, w.fake.bot.id), pastSnowflake),
    "author.username": junk,
    "author.global_name": junk,
    member: fc.oneof(
      junk,
      fc.constantFrom<unknown>("nope", [], { nick: 5 }, { nick: "Evil" }, { user: null }),
    ),
    "member.nick": junk,
    content: fc.oneof(junk, hugeMarker),
    attachments: fc.oneof(junk, fc.array(fc.oneof(junk, hostileAttachment(w.fake.origin)), { maxLength: 3 })),
    "attachments.0": hostileAttachment(w.fake.origin),
    message_reference: fc.oneof(
      junk,
      fc.record(
        {
          message_id: fc.oneof(pastSnowflake, fc.constant(STORED_ID), junk),
          channel_id: fc.oneof(pastSnowflake, junk),
          guild_id: junk,
          type: fc.oneof(fc.constantFrom(0, 1), junk),
        },
        { requiredKeys: [] },
      ),
    ),
    referenced_message: junk,
    timestamp: fc.oneof(junk, fc.constantFrom("garbage", "9999-99-99T99:99:99Z", "2026-02-30T00:00:00Z")),
    edited_timestamp: junk,
    mentions: junk,
    embeds: junk,
    components: junk,
    nonce: junk,
    flags: junk,
  };
}
