/**
 * The one file that imports discord.js (loaded lazily, only when a bot token is set). It owns the Client,
 * hands raw MESSAGE_CREATE, GUILD_CREATE, change and rename payloads and link events to the connector, and offers the REST
 * calls gw makes (post, history, open a DM). A dispatch that discord.js's handlers or gw's own listeners
 * cannot digest is dropped with a warning, never thrown.
 */
import {
  Client,
  Events,
  GatewayDispatchEvents,
  GatewayIntentBits,
  Options,
  Partials,
  Routes,
} from "discord.js";

/** Keeps the bot's own user or member (discord.js needs it), none of anyone else's. */
const onlyTheBot = {
  maxSize: 0,
  keepOverLimit: (x: { id: string; client: Client }) => x.id === x.client.user?.id,
};

/**
 * What discord.js caches: gw reads messages from the raw dispatches and sends through REST, so it needs
 * guilds, channels, roles and permission overwrites (never limited: discord.js needs them whole) and the
 * bot's own member, and nothing per message or per user: by default discord.js keeps 200 messages per
 * channel and every user and member it ever saw, which grows without bound on a busy bot.
 */
export const CACHE_LIMITS = {
  MessageManager: 0,
  UserManager: onlyTheBot,
  GuildMemberManager: onlyTheBot,
  ThreadMemberManager: 0,
  PresenceManager: 0,
  ReactionManager: 0,
  ReactionUserManager: 0,
  VoiceStateManager: 0,
  GuildEmojiManager: 0,
  GuildStickerManager: 0,
  GuildScheduledEventManager: 0,
  StageInstanceManager: 0,
  GuildInviteManager: 0,
  GuildBanManager: 0,
  AutoModerationRuleManager: 0,
  ApplicationCommandManager: 0,
  BaseGuildEmojiManager: 0,
  GuildMessageManager: 0,
  DMMessageManager: 0,
} as const;

import type { ChangeDispatch } from "./changes.ts";
import type { NameDispatch } from "./channel-names.ts";

export interface LinkOptions {
  token: string;
  /** GW_COMMUNITY_API_URL. */
  apiUrl: string;
  restTimeoutMs: number;
  restRetries: number;
  /**
   * A rate-limit wait longer than this fails the request (nothing sent) instead of waiting: a long wait must
   * not hold a send or other channels.
   */
  maxRateLimitWaitMs: number;
  /** false removes the 5 s wait between IDENTIFYs (tests that re-identify). */
  throttleIdentify: boolean;
}

export interface LinkEvents {
  /** A MESSAGE_CREATE dispatch payload, live or replayed after a resume. */
  message(payload: unknown): void;
  /**
   * A session began (READY, with the ids of the guilds it lists) or was resumed (RESUMED, after its
   * replay). Called from the dispatch itself, so before any later MESSAGE_CREATE of that session.
   */
  session(how: "new" | "resumed", guildIds?: readonly string[]): void;
  /** A GUILD_CREATE payload, raw, before discord.js handles it and before any later dispatch. */
  guild(payload: unknown): void;
  /**
   * A dispatch that changes a stored message (edit, delete, reaction); `key` is the dispatch's session id
   * and sequence, the same when a RESUME replays it.
   */
  change(t: ChangeDispatch, payload: unknown, key: string): void;
  /** A dispatch that renames or creates a guild, channel or thread (the channel list's names). */
  rename(t: Exclude<NameDispatch, "guild">, payload: unknown): void;
  /** The shard is ready again (guilds cached after READY, or resumed). */
  ready(): void;
  /** The socket closed and the client is reconnecting. */
  reconnecting(): void;
  /** The gateway closed with a code it will not reconnect after (4004, 4014, ...). */
  closedForGood(code: number): void;
  warn(what: string, err?: unknown): void;
}

export type DiscordLink = ReturnType<typeof openDiscordLink>;

type ReadyData = {
  user?: { id?: string; username?: string; global_name?: string | null };
  guilds?: unknown;
  session_id?: unknown;
};

/** The dispatches that change stored messages, and what gw calls them (changes.ts). */
const CHANGE_DISPATCHES = new Map<string, ChangeDispatch>([
  [GatewayDispatchEvents.MessageUpdate, "update"],
  [GatewayDispatchEvents.MessageDelete, "delete"],
  [GatewayDispatchEvents.MessageDeleteBulk, "delete_bulk"],
  [GatewayDispatchEvents.MessageReactionAdd, "reaction_add"],
  [GatewayDispatchEvents.MessageReactionRemove, "reaction_remove"],
]);
const NAME_DISPATCHES = new Map<string, Exclude<NameDispatch, "guild">>([
  [GatewayDispatchEvents.GuildUpdate, "guild_update"],
  [GatewayDispatchEvents.ChannelCreate, "channel"],
  [GatewayDispatchEvents.ChannelUpdate, "channel"],
  [GatewayDispatchEvents.ThreadCreate, "thread"],
  [GatewayDispatchEvents.ThreadUpdate, "thread"],
]);
const guildIdsOf = (guilds: unknown): string[] =>
  Array.isArray(guilds)
    ? guilds.flatMap((g: { id?: unknown } | null) => (typeof g?.id === "string" ? [g.id] : []))
    : [];

export function openDiscordLink(o: LinkOptions, on: LinkEvents) {
  const client = newClient(o);
  let bot: { id: string; name: string } | null = null;
  /**
   * Thrown inside @discordjs/ws's un-awaited frame handler, an error would be an unhandled rejection, which
   * ends the process.
   */
  const dropOnThrow =
    <A extends unknown[]>(what: string, handle: (...args: A) => void) =>
    (...args: A) => {
      try {
        handle(...args);
      } catch (err) {
        on.warn(`a ${what} dispatch could not be handled; it was dropped`, err);
      }
    };
  guardPackets(client, on);
  /** The gateway session (READY), part of each change's key. */
  let session = "";

  client.ws.on(
    GatewayDispatchEvents.Ready,
    dropOnThrow("READY", (d: ReadyData) => {
      if (d.user?.id) bot = { id: d.user.id, name: d.user.global_name || d.user.username || d.user.id };
      session = typeof d.session_id === "string" ? d.session_id : "";
      on.session("new", guildIdsOf(d.guilds));
    }),
  );
  client.ws.on(
    GatewayDispatchEvents.GuildCreate,
    dropOnThrow("GUILD_CREATE", (d: unknown) => on.guild(d)),
  );
  client.ws.on(GatewayDispatchEvents.Resumed, () => on.session("resumed"));
  client.ws.on(
    GatewayDispatchEvents.MessageCreate,
    dropOnThrow("MESSAGE_CREATE", (d: unknown) => on.message(d)),
  );
  // The raw event carries the dispatch's sequence, which a RESUME replay repeats: with the session id,
  // the key that stores a change once.
  client.on(
    Events.Raw,
    dropOnThrow("change", (packet: { t?: unknown; s?: unknown; d?: unknown }) => {
      const what = CHANGE_DISPATCHES.get(String(packet?.t));
      if (what) on.change(what, packet.d, `${session}:${String(packet.s)}`);
      const renamed = NAME_DISPATCHES.get(String(packet?.t));
      if (renamed) on.rename(renamed, packet.d);
    }),
  );
  client.on(Events.ShardReady, () => on.ready());
  client.on(Events.ShardResume, () => on.ready());
  client.on(Events.ShardReconnecting, () => on.reconnecting());
  client.on(Events.ShardDisconnect, (event) => on.closedForGood(event.code));
  client.on(Events.ShardError, (err) => on.warn("gateway socket error", err));
  client.on(Events.Error, (err) => on.warn("discord.js error", err));
  client.on(Events.Warn, (text) => on.warn(text));

  return {
    /**
     * Resolves at clientReady (caches filled), not at READY; rejects when login fails (bad token, refused
     * intents, no gateway).
     */
    login: () =>
      new Promise<void>((resolve, reject) => {
        client.once(Events.ClientReady, () => resolve());
        client.login(o.token).catch(reject);
      }),
    /** The bot's own user, known from READY on. */
    botUser: () => bot,
    /** When the last acknowledged heartbeat was sent, if any. */
    lastAckAt: (): number | null => {
      const at = client.ws.shards.first()?.lastPingTimestamp ?? -1;
      return at > 0 ? at : null;
    },
    ...restCalls(client.rest),
    destroy: () => client.destroy(),
    /** How many entries discord.js's caches hold (tests and the soak benchmark watch them stay small). */
    cacheSizes: () => cacheSizesOf(client),
  };
}

/** How many entries a discord.js client's caches hold (pure count). */
export function cacheSizesOf(client: Client) {
  return {
    guilds: client.guilds.cache.size,
    channels: client.channels.cache.size,
    users: client.users.cache.size,
    members: client.guilds.cache.reduce((n, g) => n + g.members.cache.size, 0),
    messages: client.channels.cache.reduce(
      (n, c) => n + ("messages" in c && c.messages ? c.messages.cache.size : 0),
      0,
    ),
  };
}

/** The REST calls gw makes, each one request through discord.js's queue (rate limits, retries). */
function restCalls(rest: Client["rest"]) {
  return {
    post: async (channelId: string, body: object): Promise<{ id: string }> =>
      (await rest.post(Routes.channelMessages(channelId), { body })) as { id: string },
    /** Up to `limit` (≤ 100) messages, newest first: the newest, or those right before `before`. */
    history: async (channelId: string, q: { before?: string; limit: number }): Promise<unknown[]> =>
      (await rest.get(Routes.channelMessages(channelId), {
        query: new URLSearchParams({ ...(q.before ? { before: q.before } : {}), limit: String(q.limit) }),
      })) as unknown[],
    /** The bot's own reaction on a message, added or removed (a repeat changes nothing). */
    react: async (channelId: string, messageId: string, emoji: string, remove: boolean): Promise<void> => {
      const route = Routes.channelMessageOwnReaction(channelId, messageId, encodeURIComponent(emoji));
      await (remove ? rest.delete(route) : rest.put(route));
    },
    /** Edits one of the bot's messages; Discord answers the message with its `edited_timestamp` and content. */
    edit: async (
      channelId: string,
      messageId: string,
      content: string,
    ): Promise<{ edited_timestamp?: unknown; content?: unknown }> =>
      (await rest.patch(Routes.channelMessage(channelId, messageId), {
        body: { content, allowed_mentions: { parse: [] } },
      })) as { edited_timestamp?: unknown; content?: unknown },
    /** Opens (or finds) the DM channel with a user: the channel object, with its `last_message_id`. */
    openDm: async (userId: string): Promise<unknown> =>
      await rest.post(Routes.userChannels(), { body: { recipient_id: userId } }),
  };
}

/** The client: gw's intents, caches and REST settings. No worker sharding: it breaks inside the compiled binary. */
function newClient(o: LinkOptions): Client {
  return new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.DirectMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.GuildMessageReactions,
      GatewayIntentBits.DirectMessageReactions,
    ],
    partials: [Partials.Channel],
    allowedMentions: { parse: [] },
    makeCache: Options.cacheWithLimits(CACHE_LIMITS),
    // Archived threads are swept (hourly, those archived over 4 h ago), as discord.js does by default.
    sweepers: { ...Options.DefaultSweeperSettings },
    rest: {
      api: o.apiUrl,
      timeout: o.restTimeoutMs,
      retries: o.restRetries,
      rejectOnRateLimit: (info) => info.timeToReset > o.maxRateLimitWaitMs,
    },
    ...(o.throttleIdentify
      ? {}
      : { ws: { buildIdentifyThrottler: async () => ({ waitForIdentify: async () => {} }) } }),
  });
}

/** discord.js's packet handlers trust every payload (a MESSAGE_CREATE with a null author throws): caught. */
function guardPackets(client: Client, on: LinkEvents): void {
  const manager = client.ws as unknown as {
    handlePacket(packet?: { t?: unknown }, shard?: unknown): boolean;
  };
  const handlePacket = manager.handlePacket.bind(manager);
  manager.handlePacket = (packet, shard) => {
    try {
      return handlePacket(packet, shard);
    } catch (err) {
      on.warn(`discord.js could not handle a ${String(packet?.t)} dispatch; it was dropped`, err);
      return true;
    }
  };
}
