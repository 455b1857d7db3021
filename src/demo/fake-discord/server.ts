/**
 * A fake Discord for tests and `gw demo` (shipped in the binary for the demo only; it never imports
 * discord.js, which connects to it from outside): one Bun.serve on 127.0.0.1 with the REST API under
 * /api/v10, the JSON gateway on /gateway and a CDN under /attachments, so the real discord.js client logs in,
 * receives events and sends through it (discord.md).
 */
import type { Server } from "bun";
import type { ChannelAccess } from "./access.ts";
import { createGateway, type SocketData } from "./gateway.ts";
import { createPeople } from "./people.ts";
import { createRest, type FailureRule, type PostedMessage, type RecordedRequest } from "./rest.ts";
import type { FakeMessageInput, FakeUser, Payload } from "./types.ts";
import { createWorld } from "./world.ts";

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

  return {
    apiUrl: `${origin()}/api`,
    origin: origin(),
    bot: world.bot,
    ...createPeople(world, gateway, rest),
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
