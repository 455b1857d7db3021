/**
 * A fake Discord for tests and `gw demo` (shipped in the binary for the demo only; it never imports
 * discord.js, which connects to it from outside): one Bun.serve on 127.0.0.1 with the REST API under
 * /api/v10, the JSON gateway on /gateway and a CDN under /attachments, so the real discord.js client logs in,
 * receives events and sends through it (discord.md).
 */
import type { Server } from "bun";
import { createGateway, type SocketData } from "./gateway.ts";
import { createRest, type FailureRule, type PostedMessage, type RecordedRequest } from "./rest.ts";
import {
  type Channel,
  type ChannelAccess,
  createWorld,
  type FakeMessageInput,
  type FakeUser,
  type Payload,
} from "./world.ts";

export type { ChannelAccess, FailureRule, FakeMessageInput, FakeUser, PostedMessage, RecordedRequest };

export const FAKE_BOT_TOKEN = "fake-bot-token";

export interface FakeDiscordOptions {
  /** Accepted bot token (default FAKE_BOT_TOKEN). */
  token?: string;
  /** Sent in HELLO (default 1000). */
  heartbeatIntervalMs?: number;
  /** "Enabled in the Developer Portal" (default true); false closes an IDENTIFY asking for it with 4014. */
  messageContentIntent?: boolean;
  /** The bot's username (default "gw-test-bot"). */
  botName?: string;
  /** Called with every message the bot creates through REST, after it is stored. */
  onPost?: (post: PostedMessage) => void;
}

/**
 * Tests build the world (users, guilds, channels, threads, DMs), post messages as users (live, or only into
 * history as if the bot were offline), and steer the protocol (`gateway`: op 7, op 9, close codes, dropped
 * sockets, unacknowledged heartbeats) and REST failures (`fail`, `rateLimit`: status, 429 with Discord's
 * headers, hangs).
 */
export async function startFakeDiscord(opts: FakeDiscordOptions = {}) {
  const token = opts.token ?? FAKE_BOT_TOKEN;
  let server: Server<SocketData> | null = null;
  const origin = () => `http://127.0.0.1:${server?.port}`;
  const gatewayUrl = () => `ws://127.0.0.1:${server?.port}/gateway`;
  const world = createWorld(origin, opts.botName);
  const gateway = createGateway(world, {
    token,
    heartbeatIntervalMs: opts.heartbeatIntervalMs ?? 1000,
    messageContentIntent: opts.messageContentIntent ?? true,
    url: gatewayUrl,
  });
  const rest = createRest(world, gateway, {
    token,
    gatewayUrl,
    messageContentIntent: opts.messageContentIntent ?? true,
    ...(opts.onPost ? { onPost: opts.onPost } : {}),
  });

  server = Bun.serve<SocketData>({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    fetch(req, srv) {
      const url = new URL(req.url);
      if (url.pathname === "/gateway")
        return gateway.upgrade(req, srv) ? undefined : new Response("upgrade failed", { status: 400 });
      if (url.pathname.startsWith("/api/v10/"))
        return rest.api(req, url.pathname.slice("/api/v10".length), url);
      if (url.pathname.startsWith("/attachments/")) return rest.cdn(url.pathname);
      return new Response("not found", { status: 404 });
    },
    websocket: gateway.websocket,
  });

  const addChannel = (c: Channel) => {
    world.channels.set(c.id, c);
    return c;
  };

  return {
    apiUrl: `${origin()}/api`,
    origin: origin(),
    bot: world.bot,
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
    dm(user: FakeUser): { id: string } {
      const existing = [...world.channels.values()].find((c) => c.type === 1 && c.recipient?.id === user.id);
      return { id: (existing ?? rest.dmChannel(user)).id };
    },
    /** Posts as a user: stored in history, and dispatched as MESSAGE_CREATE unless `dispatch: false`. */
    message(channelId: string, input: FakeMessageInput): Payload {
      const channel = world.channel(channelId);
      if (!channel) throw new Error(`fake Discord: no channel ${channelId}`);
      const id = world.snowflake(input.at);
      const reference = input.replyTo
        ? { type: 0, message_id: input.replyTo, channel_id: channelId, guild_id: channel.guildId }
        : undefined;
      const message = world.messagePayload(
        channel,
        {
          id,
          author: input.author,
          content: input.content ?? "",
          type: input.type ?? (input.replyTo ? 19 : 0),
          ...(input.nick !== undefined ? { nick: input.nick } : {}),
        },
        {
          attachments: (input.attachments ?? []).map((a) => world.attachmentPayload(channelId, a)),
          ...(reference ? { reference } : {}),
        },
      );
      const list = [...(world.history.get(channelId) ?? []), message];
      list.sort((a, b) => (BigInt(a.id as string) < BigInt(b.id as string) ? -1 : 1));
      world.history.set(channelId, list);
      if (input.dispatch !== false) gateway.dispatch("MESSAGE_CREATE", message);
      return message;
    },
    /** A user edits a message: its content changes in history and MESSAGE_UPDATE goes out. */
    edit(channelId: string, messageId: string, content: string): Payload {
      const list = world.history.get(channelId) ?? [];
      const i = list.findIndex((m) => m.id === messageId);
      const old = list[i];
      if (!old) throw new Error(`fake Discord: no message ${messageId} in ${channelId}`);
      const edited = { ...old, content, edited_timestamp: new Date().toISOString() };
      list[i] = edited;
      gateway.dispatch("MESSAGE_UPDATE", edited);
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
      const channel = world.channel(channelId);
      const custom = /^<(a?):([^:]*):(\d+)>$/.exec(emoji);
      const payload = {
        user_id: user.id,
        channel_id: channelId,
        message_id: messageId,
        emoji: custom
          ? { id: custom[3], name: custom[2], animated: custom[1] === "a" }
          : { id: null, name: emoji },
        ...(channel?.guildId
          ? { guild_id: channel.guildId, member: { user: world.userPayload(user), roles: [], nick: null } }
          : {}),
      };
      gateway.dispatch(remove ? "MESSAGE_REACTION_REMOVE" : "MESSAGE_REACTION_ADD", payload);
    },
    /** Renames a guild (GUILD_UPDATE), a channel (CHANNEL_UPDATE) or a thread (THREAD_UPDATE). */
    rename(id: string, name: string): void {
      const guild = world.guilds.get(id);
      if (guild) {
        guild.name = name;
        gateway.dispatch("GUILD_UPDATE", { id, name, icon: null, owner_id: world.owner.id });
        return;
      }
      const channel = world.channel(id);
      if (!channel) throw new Error(`fake Discord: no guild or channel ${id}`);
      channel.name = name;
      gateway.dispatch(
        channel.type === 11 ? "THREAD_UPDATE" : "CHANNEL_UPDATE",
        world.channelPayload(channel),
      );
    },
    history: (channelId: string): Payload[] => [...(world.history.get(channelId) ?? [])],
    gateway: gateway.control,
    requests: rest.requests,
    posted: rest.posted,
    edits: rest.edits,
    reactionCalls: rest.reactionCalls,
    cdnHits: rest.cdnHits,
    fail: (rule: FailureRule) => rest.fail(rule),
    /** 429 with Discord's headers and body. */
    rateLimit(rule: {
      method?: string;
      path: string | RegExp;
      retryAfterS: number;
      times?: number;
      global?: boolean;
    }) {
      rest.fail({
        ...(rule.method ? { method: rule.method } : {}),
        path: rule.path,
        times: rule.times ?? 1,
        status: 429,
        body: {
          message: "You are being rate limited.",
          retry_after: rule.retryAfterS,
          global: rule.global ?? false,
        },
        headers: {
          "retry-after": String(rule.retryAfterS),
          "x-ratelimit-limit": "5",
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset-after": String(rule.retryAfterS),
          "x-ratelimit-bucket": "fake-bucket",
          "x-ratelimit-scope": rule.global ? "global" : "user",
          ...(rule.global ? { "x-ratelimit-global": "true" } : {}),
        },
      });
    },
    clearFailures: () => rest.clearFailures(),
    async stop(): Promise<void> {
      rest.stop();
      gateway.stop();
      await server?.stop(true);
    },
  };
}

export type FakeDiscord = Awaited<ReturnType<typeof startFakeDiscord>>;
