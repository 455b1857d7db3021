/**
 * The fake Discord's payloads, built from their arguments only (pure): a user, a channel (DM, guild
 * channel, thread), a GUILD_CREATE, a message (a reply with its `referenced_message`, a forward with its
 * snapshot) and a reaction as the gateway dispatches them and an attachment's CDN url. world.ts passes in
 * what they need of its state (history, overwrites, the bot).
 */
import type { Channel, FakeUser, Payload } from "./types.ts";

export const DISCORD_EPOCH = 1_420_070_400_000n;

/** The epoch milliseconds in a snowflake's top bits. */
export const snowflakeMs = (id: string): number => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);

export const userPayload = (u: FakeUser): Payload => ({
  id: u.id,
  username: u.username,
  global_name: u.global_name,
  discriminator: "0",
  avatar: null,
  ...(u.bot ? { bot: true } : {}),
});

/** A thread's own fields (every fake thread is the bot's, with `messages` sent in it). */
const threadFields = (c: Channel, botId: string, messages: number): Payload => ({
  owner_id: botId,
  thread_metadata: {
    archived: false,
    auto_archive_duration: 1440,
    locked: false,
    archive_timestamp: new Date().toISOString(),
    create_timestamp: new Date(snowflakeMs(c.id)).toISOString(),
  },
  message_count: messages,
  total_message_sent: messages,
  member_count: 1,
});

/** The bot's member entry in a guild (without the presence intent, Discord lists only the bot). */
const botMember = (bot: FakeUser, g: { botRoleId: string; joinedAt: string }): Payload => ({
  user: userPayload(bot),
  nick: null,
  roles: [g.botRoleId],
  joined_at: g.joinedAt,
  deaf: false,
  mute: false,
  flags: 0,
});

/** Message flag HAS_SNAPSHOT: a forward (Discord docs `resources/message`, Message Flags). */
export const HAS_SNAPSHOT = 1 << 14;

/**
 * A message as the gateway dispatches it (guild_id, channel_type, member for guild channels). A forward
 * (`snapshots`) has its reference of type 1, empty content and the HAS_SNAPSHOT flag, as on Discord.
 */
export const messagePayload = (
  channel: Channel,
  input: { id: string; author: FakeUser; content: string; type: number; nick?: string | null },
  extra: { attachments: Payload[]; reference?: Payload; snapshots?: Payload[] },
): Payload => ({
  id: input.id,
  channel_id: channel.id,
  author: userPayload(input.author),
  content: input.content,
  timestamp: new Date(snowflakeMs(input.id)).toISOString(),
  edited_timestamp: null,
  tts: false,
  mention_everyone: false,
  mentions: [],
  mention_roles: [],
  attachments: extra.attachments,
  embeds: [],
  pinned: false,
  flags: extra.snapshots ? HAS_SNAPSHOT : 0,
  components: [],
  type: input.type,
  ...(extra.reference ? { message_reference: extra.reference } : {}),
  ...(extra.snapshots ? { message_snapshots: extra.snapshots } : {}),
  ...(channel.guildId
    ? {
        guild_id: channel.guildId,
        channel_type: channel.type,
        member: {
          nick: input.nick ?? null,
          roles: [],
          joined_at: new Date().toISOString(),
          deaf: false,
          mute: false,
          flags: 0,
        },
      }
    : { channel_type: channel.type }),
});

/**
 * A forward's snapshot of `original`: the subset of fields Discord copies, frozen when forwarded (no id,
 * no author; Discord docs `resources/message`, Message Snapshot Object).
 */
export const snapshotOf = (original: Payload): Payload => ({
  message: {
    type: original.type,
    content: original.content,
    embeds: original.embeds ?? [],
    attachments: original.attachments ?? [],
    timestamp: original.timestamp,
    edited_timestamp: original.edited_timestamp ?? null,
    flags: original.flags ?? 0,
    mentions: original.mentions ?? [],
    mention_roles: original.mention_roles ?? [],
    components: original.components ?? [],
  },
});

/**
 * A reply as Discord sends it: with `referenced_message`, the original as it is now (its REST form, without
 * its own `referenced_message`), or null when it was deleted; a reply pings the original's author (the
 * client's default), so that author is among its `mentions`. Other messages are returned as they are.
 */
export function withReferenced(message: Payload, original: Payload | undefined): Payload {
  const ref = message.message_reference as { type?: number } | undefined;
  if (message.type !== 19 || !ref || (ref.type ?? 0) !== 0) return message;
  if (!original) return { ...message, referenced_message: null };
  const { guild_id: _g, channel_type: _t, member: _m, referenced_message: _r, ...rest } = original;
  const author = original.author as { id?: string } | undefined;
  const mentions = (message.mentions as { id?: string }[] | undefined) ?? [];
  const pinged = author && !mentions.some((u) => u.id === author.id) ? [...mentions, author] : mentions;
  return { ...message, mentions: pinged, referenced_message: rest };
}

/** A signed-looking CDN url for an upload, valid a day (Discord's `ex`, `is`, `hm` parameters). */
export function attachmentUrl(origin: string, channelId: string, id: string, filename: string): string {
  const hex = (n: number) => Math.floor(n / 1000).toString(16);
  const now = Date.now();
  return `${origin}/attachments/${channelId}/${id}/${encodeURIComponent(filename)}?ex=${hex(now + 86_400_000)}&is=${hex(now)}&hm=${id.slice(-8)}`;
}

/**
 * A channel as Discord shows it: a DM with its recipient, a guild channel with the bot's overwrites, a
 * thread with its own fields; `last_message_id` and a thread's counts come from its history.
 */
export function channelPayload(
  c: Channel,
  seen: { lastMessageId: string | null; messages: number; botId: string; overwrites: Payload[] },
): Payload {
  if (c.type === 1 || c.type === 3)
    return {
      id: c.id,
      type: c.type,
      last_message_id: seen.lastMessageId,
      flags: 0,
      recipients: (c.recipients ?? (c.recipient ? [c.recipient] : [])).map(userPayload),
      ...(c.type === 3 ? { name: null, icon: null, owner_id: c.recipients?.[0]?.id ?? null } : {}),
    };
  return {
    id: c.id,
    type: c.type,
    name: c.name,
    guild_id: c.guildId,
    last_message_id: seen.lastMessageId,
    flags: 0,
    rate_limit_per_user: 0,
    parent_id: c.parentId ?? null,
    ...(c.type === 11
      ? threadFields(c, seen.botId, seen.messages)
      : { position: 0, permission_overwrites: seen.overwrites, nsfw: false, topic: null }),
  };
}

/** GUILD_CREATE for a guild: its roles (access.ts), channels, visible threads and the bot's member. */
export const guildPayload = (
  g: { id: string; name: string; joinedAt: string; botRoleId: string },
  parts: { ownerId: string; bot: FakeUser; roles: Payload[]; channels: Payload[]; threads: Payload[] },
): Payload => ({
  id: g.id,
  name: g.name,
  icon: null,
  owner_id: parts.ownerId,
  unavailable: false,
  member_count: 2,
  large: false,
  joined_at: g.joinedAt,
  features: [],
  emojis: [],
  stickers: [],
  roles: parts.roles,
  channels: parts.channels,
  threads: parts.threads,
  // Without the presence intent Discord lists only the bot (and users in voice).
  members: [botMember(parts.bot, g)],
  presences: [],
  voice_states: [],
  stage_instances: [],
  guild_scheduled_events: [],
});

/** A reaction dispatch (the same for add and remove), a custom `<:name:id>` emoji split, the member in guilds. */
export function reactionPayload(
  channel: Channel | undefined,
  r: { channelId: string; messageId: string; user: FakeUser; emoji: string },
): Payload {
  const custom = /^<(a?):([^:]*):(\d+)>$/.exec(r.emoji);
  return {
    user_id: r.user.id,
    channel_id: r.channelId,
    message_id: r.messageId,
    emoji: custom
      ? { id: custom[3], name: custom[2], animated: custom[1] === "a" }
      : { id: null, name: r.emoji },
    ...(channel?.guildId
      ? { guild_id: channel.guildId, member: { user: userPayload(r.user), roles: [], nick: null } }
      : {}),
  };
}
