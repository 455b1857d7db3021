/**
 * The fake Discord's state: users, guilds, channels (text, thread, DM), message history and the attachment
 * files its CDN serves, plus the payloads Discord sends for them. Ids are real snowflakes (milliseconds since
 * the Discord epoch in the top bits), strictly increasing unless backdated. Gateway payloads carry
 * `guild_id`, `channel_type` and `member` as real MESSAGE_CREATEs do; REST history items do not. History
 * holds messages as posted; a reply's `referenced_message` is added when it is sent (`asSent`).
 */

import { type ChannelAccess, guildRoles, overwritesFor } from "./access.ts";
import {
  attachmentUrl,
  channelPayload as channelPayloadOf,
  DISCORD_EPOCH,
  guildPayload,
  messagePayload,
  userPayload,
  withReferenced,
} from "./payloads.ts";

import type { Channel, FakeAttachmentInput, FakeGuild, FakeUser, Payload } from "./types.ts";

interface StoredFile {
  bytes: Uint8Array;
  contentType: string;
  expired: boolean;
}

/** Snowflake ids: strictly increasing for "now"; a backdated id (tests of age limits) is only unique. */
function snowflakes(): (ms?: number) => string {
  let last = 0n;
  let counter = 0n;
  return (ms) => {
    let id = ((BigInt(ms ?? Date.now()) - DISCORD_EPOCH) << 22n) | (counter++ & 0xfffn);
    if (ms === undefined && id <= last) id = last + 1n;
    if (ms === undefined) last = id;
    return id.toString();
  };
}

/** Keeps an attachment's bytes for the CDN under `id` and returns its payload. */
function storeAttachment(
  files: Map<string, StoredFile>,
  id: string,
  origin: string,
  channelId: string,
  a: FakeAttachmentInput,
): Payload {
  const bytes = typeof a.data === "string" ? new TextEncoder().encode(a.data) : (a.data ?? new Uint8Array());
  const contentType = a.contentType ?? "application/octet-stream";
  files.set(id, { bytes, contentType, expired: a.expired ?? false });
  const url = a.url ?? attachmentUrl(origin, channelId, id, a.filename);
  return {
    id,
    filename: a.filename,
    size: a.size ?? bytes.byteLength,
    url,
    proxy_url: url.replace("/attachments/", "/media/attachments/"),
    content_type: contentType,
  };
}

/** Stored form of a message: the REST history item (no guild_id, channel_type or member). */
function restForm(p: Payload): Payload {
  const { guild_id: _g, channel_type: _t, member: _m, ...rest } = p;
  return rest;
}

export function createWorld(origin: () => string, botName = "gw-test-bot") {
  const snowflake = snowflakes();
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

  const find = (channelId: unknown, messageId: unknown): Payload | undefined =>
    (history.get(String(channelId)) ?? []).find((m) => m.id === messageId);

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
    channelPayloadOf(c, {
      lastMessageId: lastMessageId(c),
      messages: (history.get(c.id) ?? []).length,
      botId: bot.id,
      overwrites: overwrites(c),
    });

  /** Lists the roles, each channel's overwrites for the bot's `access` (access.ts) and the bot's member. */
  const guildCreate = (guildId: string): Payload => {
    const g = guilds.get(guildId) as FakeGuild;
    const own = [...channels.values()].filter((c) => c.guildId === guildId);
    return guildPayload(g, {
      ownerId: owner.id,
      bot,
      roles: guildRoles({ guildId: g.id, botRoleId: g.botRoleId, botId: bot.id, botName: bot.username }),
      channels: own.filter((c) => c.type !== 11).map((c) => ({ ...channelPayload(c), guild_id: undefined })),
      // The active threads the bot can see (its own thread membership is not tracked).
      threads: own.filter((c) => c.type === 11 && accessOf(c) !== "hidden").map(channelPayload),
    });
  };

  const attachmentPayload = (channelId: string, a: FakeAttachmentInput): Payload =>
    storeAttachment(files, snowflake(), origin(), channelId, a);

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
    /** A message in history, if it is there (not deleted). */
    find: (channelId: string, messageId: string) => find(channelId, messageId),
    /** A stored message as Discord sends it now: a reply with its original, or null once that is deleted. */
    asSent: (p: Payload): Payload => {
      const ref = (p.message_reference ?? {}) as { channel_id?: unknown; message_id?: unknown };
      return withReferenced(p, find(ref.channel_id ?? p.channel_id, ref.message_id));
    },
    restForm,
  };
}

export type World = ReturnType<typeof createWorld>;
