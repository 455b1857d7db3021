/**
 * The fake Discord's state: users, guilds, channels (text, thread, DM), message history and the attachment
 * files its CDN serves, plus the payloads Discord sends for them. Ids are real snowflakes (milliseconds since
 * the Discord epoch in the top bits), strictly increasing unless backdated. Gateway payloads carry
 * `guild_id`, `channel_type` and `member` as real MESSAGE_CREATEs do; REST history items do not.
 */

import { type ChannelAccess, guildRoles, overwritesFor } from "./access.ts";

export type { ChannelAccess } from "./access.ts";

export const DISCORD_EPOCH = 1_420_070_400_000n;

export interface FakeUser {
  id: string;
  username: string;
  global_name: string | null;
  bot?: boolean;
}

export interface FakeAttachmentInput {
  filename: string;
  contentType?: string;
  data?: Uint8Array | string;
  /** Declared size override. */
  size?: number;
  /** Override the url (e.g. a dead link). */
  url?: string;
  /** The CDN answers 404. */
  expired?: boolean;
}

export interface FakeMessageInput {
  author: FakeUser;
  content?: string;
  /** Guild member nick. */
  nick?: string | null;
  /** Default 0, or 19 when replyTo is set. */
  type?: number;
  /** A message id in the same channel. */
  replyTo?: string;
  attachments?: FakeAttachmentInput[];
  /** Default true: send MESSAGE_CREATE to sessions; false = only in history. */
  dispatch?: boolean;
  /** Epoch ms for the snowflake; default now. */
  at?: number;
}

export type Payload = Record<string, unknown>;

export interface Channel {
  id: string;
  type: number;
  name?: string;
  guildId?: string;
  parentId?: string;
  recipient?: FakeUser;
  /** Guild channels only (threads follow their parent); default `open`. */
  access?: ChannelAccess;
}

export interface FakeGuild {
  id: string;
  name: string;
  joinedAt: string;
  /** The bot's managed role in this guild. */
  botRoleId: string;
}

interface StoredFile {
  bytes: Uint8Array;
  contentType: string;
  expired: boolean;
}

const snowflakeMs = (id: string): number => Number((BigInt(id) >> 22n) + DISCORD_EPOCH);

export function createWorld(origin: () => string, botName = "gw-test-bot") {
  let last = 0n;
  let counter = 0n;
  /** Strictly increasing for "now"; a backdated id (tests of age limits) is only unique. */
  const snowflake = (ms?: number): string => {
    let id = ((BigInt(ms ?? Date.now()) - DISCORD_EPOCH) << 22n) | (counter++ & 0xfffn);
    if (ms === undefined && id <= last) id = last + 1n;
    if (ms === undefined) last = id;
    return id.toString();
  };
  const users = new Map<string, FakeUser>();
  const guilds = new Map<string, FakeGuild>();
  const channels = new Map<string, Channel>();
  const history = new Map<string, Payload[]>();
  const files = new Map<string, StoredFile>();
  const application = { id: snowflake(), flags: 0 };
  const bot: FakeUser = { id: snowflake(), username: botName, global_name: null, bot: true };
  users.set(bot.id, bot);
  /** Owns every guild (an owner has every permission, so it is not the bot). */
  const owner: FakeUser = { id: snowflake(), username: "server-owner", global_name: null };
  users.set(owner.id, owner);

  const userPayload = (u: FakeUser) => ({
    id: u.id,
    username: u.username,
    global_name: u.global_name,
    discriminator: "0",
    avatar: null,
    ...(u.bot ? { bot: true } : {}),
  });

  const lastMessageId = (c: Channel): string | null =>
    ((history.get(c.id) ?? []).at(-1)?.id as string | undefined) ?? null;

  /** The bot's access in a guild channel; a thread has its parent's. */
  const accessOf = (c: Channel): ChannelAccess => {
    const parent = c.parentId ? channels.get(c.parentId) : undefined;
    return (parent ?? c).access ?? "open";
  };

  const overwrites = (c: Channel): Payload[] => {
    const guild = c.guildId ? guilds.get(c.guildId) : undefined;
    return guild
      ? overwritesFor(c.access ?? "open", { guildId: guild.id, botRoleId: guild.botRoleId, botId: bot.id })
      : [];
  };

  /** With `last_message_id`, the newest in the channel's history. */
  const channelPayload = (c: Channel): Payload =>
    c.type === 1
      ? {
          id: c.id,
          type: 1,
          last_message_id: lastMessageId(c),
          flags: 0,
          recipients: c.recipient ? [userPayload(c.recipient)] : [],
        }
      : {
          id: c.id,
          type: c.type,
          name: c.name,
          guild_id: c.guildId,
          last_message_id: lastMessageId(c),
          flags: 0,
          rate_limit_per_user: 0,
          parent_id: c.parentId ?? null,
          ...(c.type === 11
            ? {
                owner_id: bot.id,
                thread_metadata: {
                  archived: false,
                  auto_archive_duration: 1440,
                  locked: false,
                  archive_timestamp: new Date().toISOString(),
                  create_timestamp: new Date(snowflakeMs(c.id)).toISOString(),
                },
                message_count: (history.get(c.id) ?? []).length,
                total_message_sent: (history.get(c.id) ?? []).length,
                member_count: 1,
              }
            : { position: 0, permission_overwrites: overwrites(c), nsfw: false, topic: null }),
        };

  /** Lists the roles, each channel's overwrites for the bot's `access` (access.ts) and the bot's member. */
  const guildCreate = (guildId: string): Payload => {
    const g = guilds.get(guildId) as FakeGuild;
    const own = [...channels.values()].filter((c) => c.guildId === guildId);
    return {
      id: g.id,
      name: g.name,
      icon: null,
      owner_id: owner.id,
      unavailable: false,
      member_count: 2,
      large: false,
      joined_at: g.joinedAt,
      features: [],
      emojis: [],
      stickers: [],
      roles: guildRoles({ guildId: g.id, botRoleId: g.botRoleId, botId: bot.id, botName: bot.username }),
      channels: own.filter((c) => c.type !== 11).map((c) => ({ ...channelPayload(c), guild_id: undefined })),
      // The active threads the bot can see (its own thread membership is not tracked).
      threads: own.filter((c) => c.type === 11 && accessOf(c) !== "hidden").map(channelPayload),
      // Without the presence intent Discord lists only the bot (and users in voice).
      members: [
        {
          user: userPayload(bot),
          nick: null,
          roles: [g.botRoleId],
          joined_at: g.joinedAt,
          deaf: false,
          mute: false,
          flags: 0,
        },
      ],
      presences: [],
      voice_states: [],
      stage_instances: [],
      guild_scheduled_events: [],
    };
  };

  /** A message as the gateway dispatches it (guild_id, channel_type, member for guild channels). */
  const messagePayload = (
    channel: Channel,
    input: { id: string; author: FakeUser; content: string; type: number; nick?: string | null },
    extra: { attachments: Payload[]; reference?: Payload },
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
    flags: 0,
    components: [],
    type: input.type,
    ...(extra.reference ? { message_reference: extra.reference } : {}),
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
      : { channel_type: 1 }),
  });

  const attachmentPayload = (channelId: string, a: FakeAttachmentInput): Payload => {
    const id = snowflake();
    const bytes =
      typeof a.data === "string" ? new TextEncoder().encode(a.data) : (a.data ?? new Uint8Array());
    const contentType = a.contentType ?? "application/octet-stream";
    files.set(id, { bytes, contentType, expired: a.expired ?? false });
    const hex = (n: number) => Math.floor(n / 1000).toString(16);
    const url =
      a.url ??
      `${origin()}/attachments/${channelId}/${id}/${encodeURIComponent(a.filename)}?ex=${hex(Date.now() + 86_400_000)}&is=${hex(Date.now())}&hm=${id.slice(-8)}`;
    return {
      id,
      filename: a.filename,
      size: a.size ?? bytes.byteLength,
      url,
      proxy_url: url.replace("/attachments/", "/media/attachments/"),
      content_type: contentType,
    };
  };

  return {
    bot,
    owner,
    application,
    accessOf,
    snowflake,
    users,
    guilds,
    channels,
    history,
    files,
    userPayload,
    channelPayload,
    guildCreate,
    messagePayload,
    attachmentPayload,
    channel: (id: string) => channels.get(id),
    /** Stored form of a message: the REST history item (no guild_id, channel_type or member). */
    restForm: (p: Payload): Payload => {
      const { guild_id: _g, channel_type: _t, member: _m, ...rest } = p;
      return rest;
    },
  };
}

export type World = ReturnType<typeof createWorld>;
