/**
 * What people do in the fake Discord's world, as tests and the demo script it: make users, guilds, channels,
 * threads and DMs, post (live or only into history; replies and forwards too), edit, delete, react and
 * rename; each change goes out as the dispatch Discord sends for it.
 */

import type { ChannelAccess } from "./access.ts";
import type { FakeGateway } from "./gateway.ts";
import { reactionPayload, snapshotOf } from "./payloads.ts";
import type { createRest } from "./rest.ts";
import type { Channel, FakeMessageInput, FakeUser, Payload } from "./types.ts";
import type { World } from "./world.ts";

export function createPeople(world: World, gateway: FakeGateway, rest: ReturnType<typeof createRest>) {
  const addChannel = (c: Channel) => {
    world.channels.set(c.id, c);
    return c;
  };
  return {
    user(input: { username: string; global_name?: string | null; bot?: boolean }): FakeUser {
      const u: FakeUser = {
        id: world.snowflake(),
        username: input.username,
        global_name: input.global_name ?? null,
        ...(input.bot ? { bot: true } : {}),
      };
      world.users.set(u.id, u);
      return u;
    },
    guild(input: { name: string }): { id: string } {
      const id = world.snowflake();
      world.guilds.set(id, {
        id,
        name: input.name,
        joinedAt: new Date().toISOString(),
        botRoleId: world.snowflake(),
      });
      gateway.dispatch("GUILD_CREATE", world.guildCreate(id));
      return { id };
    },
    /** A text channel; `access` says what the bot may do in it (default `open`). */
    channel(guildId: string, input: { name: string; access?: ChannelAccess }): { id: string } {
      const c = addChannel({
        id: world.snowflake(),
        type: 0,
        name: input.name,
        guildId,
        ...(input.access ? { access: input.access } : {}),
      });
      gateway.dispatch("CHANNEL_CREATE", world.channelPayload(c));
      return { id: c.id };
    },
    /** A public thread (active), with its parent's access. */
    thread(guildId: string, parentId: string, input: { name: string }): { id: string } {
      const c = addChannel({ id: world.snowflake(), type: 11, name: input.name, guildId, parentId });
      gateway.dispatch("THREAD_CREATE", { ...world.channelPayload(c), newly_created: true });
      return { id: c.id };
    },
    /** A group DM (channel type 3) of these users and the bot; no guild. */
    groupDm(users: FakeUser[]): { id: string } {
      const c = addChannel({ id: world.snowflake(), type: 3, recipients: users });
      return { id: c.id };
    },
    dm(user: FakeUser): { id: string } {
      const existing = [...world.channels.values()].find((c) => c.type === 1 && c.recipient?.id === user.id);
      return { id: (existing ?? rest.dmChannel(user)).id };
    },
    /** Posts as a user: stored in history, and dispatched as MESSAGE_CREATE unless `dispatch: false`. */
    message: (channelId: string, input: FakeMessageInput): Payload => post(world, gateway, channelId, input),
    /** A user edits a message: its content changes in history and MESSAGE_UPDATE goes out. */
    edit(channelId: string, messageId: string, content: string): Payload {
      const list = world.history.get(channelId) ?? [];
      const i = list.findIndex((m) => m.id === messageId);
      const old = list[i];
      if (!old) throw new Error(`fake Discord: no message ${messageId} in ${channelId}`);
      const edited = { ...old, content, edited_timestamp: new Date().toISOString() };
      list[i] = edited;
      gateway.dispatch("MESSAGE_UPDATE", world.asSent(edited));
      return edited;
    },
    /** Messages deleted (one: MESSAGE_DELETE; several: MESSAGE_DELETE_BULK), gone from history. */
    remove(channelId: string, messageIds: readonly string[]): void {
      const channel = world.channel(channelId);
      world.history.set(
        channelId,
        (world.history.get(channelId) ?? []).filter((m) => !messageIds.includes(m.id as string)),
      );
      const where = { channel_id: channelId, ...(channel?.guildId ? { guild_id: channel.guildId } : {}) };
      if (messageIds.length === 1) gateway.dispatch("MESSAGE_DELETE", { id: messageIds[0], ...where });
      else gateway.dispatch("MESSAGE_DELETE_BULK", { ids: [...messageIds], ...where });
    },
    /** A user adds (or removes) a reaction: MESSAGE_REACTION_ADD (_REMOVE), with the member in guilds. */
    react(channelId: string, messageId: string, user: FakeUser, emoji: string, remove = false): void {
      gateway.dispatch(
        remove ? "MESSAGE_REACTION_REMOVE" : "MESSAGE_REACTION_ADD",
        reactionPayload(world.channel(channelId), { channelId, messageId, user, emoji }),
      );
    },
    /** Renames a guild (GUILD_UPDATE), a channel (CHANNEL_UPDATE) or a thread (THREAD_UPDATE). */
    rename: (id: string, name: string): void => rename(world, gateway, id, name),
  };
}

/** What a forward carries: a reference of type 1 to the original and a snapshot of it (no content). */
function forwardOf(world: World, forward: { channelId: string; messageId: string }) {
  const original = world.find(forward.channelId, forward.messageId);
  if (!original) throw new Error(`fake Discord: no message ${forward.messageId} in ${forward.channelId}`);
  const guildId = world.channel(forward.channelId)?.guildId;
  return {
    reference: { type: 1, message_id: forward.messageId, channel_id: forward.channelId, guild_id: guildId },
    snapshots: [snapshotOf(original)],
  };
}

/** Stored in history as posted; dispatched as sent (a reply with its original). Returns the stored form. */
function post(world: World, gateway: FakeGateway, channelId: string, input: FakeMessageInput): Payload {
  const channel = world.channel(channelId);
  if (!channel) throw new Error(`fake Discord: no channel ${channelId}`);
  const id = world.snowflake(input.at);
  const forward = input.forward ? forwardOf(world, input.forward) : undefined;
  const reference = input.replyTo
    ? { type: 0, message_id: input.replyTo, channel_id: channelId, guild_id: channel.guildId }
    : forward?.reference;
  const message = world.messagePayload(
    channel,
    {
      id,
      author: input.author,
      content: forward ? "" : (input.content ?? ""),
      type: input.type ?? (input.replyTo ? 19 : 0),
      ...(input.nick !== undefined ? { nick: input.nick } : {}),
    },
    {
      attachments: forward ? [] : (input.attachments ?? []).map((a) => world.attachmentPayload(channelId, a)),
      ...(reference ? { reference } : {}),
      ...(forward ? { snapshots: forward.snapshots } : {}),
    },
  );
  const list = [...(world.history.get(channelId) ?? []), message];
  list.sort((a, b) => (BigInt(a.id as string) < BigInt(b.id as string) ? -1 : 1));
  world.history.set(channelId, list);
  if (input.dispatch !== false) gateway.dispatch("MESSAGE_CREATE", world.asSent(message));
  return message;
}

function rename(world: World, gateway: FakeGateway, id: string, name: string): void {
  const guild = world.guilds.get(id);
  if (guild) {
    guild.name = name;
    gateway.dispatch("GUILD_UPDATE", { id, name, icon: null, owner_id: world.owner.id });
    return;
  }
  const channel = world.channel(id);
  if (!channel) throw new Error(`fake Discord: no guild or channel ${id}`);
  channel.name = name;
  gateway.dispatch(channel.type === 11 ? "THREAD_UPDATE" : "CHANNEL_UPDATE", world.channelPayload(channel));
}
