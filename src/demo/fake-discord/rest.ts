/**
 * The fake Discord REST API under /api/v10 (discord.md §4, §7) and its CDN. Every request is recorded;
 * programmed failures (FailureRule) are checked first. A guild channel the bot may not view answers 403
 * Missing Access (50001), and one whose history it may not read an empty list, as Discord does.
 */
import type { FakeGateway } from "./gateway.ts";
import type { FakeUser, Payload } from "./types.ts";
import type { World } from "./world.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  at: number;
}

export interface FailureRule {
  method?: string;
  /** Matched against the path without /api/v10. */
  path: string | RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Default 1. */
  times?: number;
  /** true: never answer (until the client aborts); "after-create": handle the request, then never answer. */
  hang?: boolean | "after-create";
  /** Only requests this accepts match. */
  when?: (req: RecordedRequest) => boolean;
}

/** A message the bot created through REST, as recorded. */
export interface PostedMessage {
  channelId: string;
  body: Record<string, unknown>;
  message: Payload;
}

const NONCE_WINDOW_MS = 120_000;
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
  });
const error = (status: number, code: number, message: string, extra: Payload = {}) =>
  json(status, { message, code, ...extra });

/** Custom emoji this world has (any name starting "party"), for the bot's reactions. */
const KNOWN_CUSTOM_EMOJI = /^party/;

export function createRest(
  world: World,
  gateway: FakeGateway,
  o: {
    token: string;
    gatewayUrl: () => string;
    messageContentIntent: boolean;
    onPost?: (post: PostedMessage) => void;
  },
) {
  const requests: RecordedRequest[] = [];
  const posted: PostedMessage[] = [];
  const cdnHits: string[] = [];
  /** The bot's edits, and its reaction calls (PUT or DELETE .../reactions/<emoji>/@me), in order. */
  const edits: { channelId: string; messageId: string; content: string }[] = [];
  const reactionCalls: { channelId: string; messageId: string; emoji: string; add: boolean }[] = [];
  /** The bot's reactions now: channel:message:emoji. */
  const reactions = new Set<string>();
  const rules: (FailureRule & { left: number })[] = [];
  const nonces = new Map<string, { at: number; message: Payload }>();
  const hangs = new Set<() => void>();

  const hang = (signal: AbortSignal) =>
    new Promise<Response>((resolve) => {
      const done = () => {
        hangs.delete(done);
        resolve(new Response(null, { status: 499 }));
      };
      hangs.add(done);
      signal.addEventListener("abort", done);
    });

  const ruleFor = (r: RecordedRequest) => {
    const rule = rules.find(
      (x) =>
        x.left > 0 &&
        (!x.method || x.method === r.method) &&
        (typeof x.path === "string" ? x.path === r.path : x.path.test(r.path)) &&
        (!x.when || x.when(r)),
    );
    if (rule) rule.left -= 1;
    return rule;
  };

  const missingAccess = () => error(403, 50001, "Missing Access");
  /** A stored message as REST answers it: its REST form, a reply with its original as it is now. */
  const restSent = (m: Payload) => world.restForm(world.asSent(m));

  /**
   * As Discord does: validates length (50035) and emptiness (50006), honours `nonce` + `enforce_nonce`, turns
   * a reference into a reply (type 19), stores the message and echoes it as MESSAGE_CREATE.
   */
  const createMessage = (channelId: string, body: Record<string, unknown>): Response => {
    const channel = world.channel(channelId);
    if (!channel) return error(404, 10003, "Unknown Channel");
    if (channel.guildId && world.accessOf(channel) === "hidden") return missingAccess();
    const content = typeof body.content === "string" ? body.content : "";
    if (content.length > 2000)
      return error(400, 50035, "Invalid Form Body", {
        errors: {
          content: {
            _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }],
          },
        },
      });
    if (content.trim() === "" && !(Array.isArray(body.embeds) && body.embeds.length > 0))
      return error(400, 50006, "Cannot send an empty message");
    const nonceKey = body.nonce === undefined ? null : `${world.bot.id}:${String(body.nonce)}`;
    const seen = nonceKey ? nonces.get(nonceKey) : undefined;
    if (seen && body.enforce_nonce === true && Date.now() - seen.at < NONCE_WINDOW_MS)
      return json(200, seen.message);
    const ref = body.message_reference as { message_id?: string; fail_if_not_exists?: boolean } | undefined;
    let reference: Payload | undefined;
    if (ref?.message_id) {
      const target = (world.history.get(channelId) ?? []).find((m) => m.id === ref.message_id);
      if (target)
        reference = { type: 0, message_id: ref.message_id, channel_id: channelId, guild_id: channel.guildId };
      else if (ref.fail_if_not_exists !== false)
        return error(400, 50035, "Invalid Form Body", {
          errors: {
            message_reference: { _errors: [{ code: "REPLIES_UNKNOWN_MESSAGE", message: "Unknown message" }] },
          },
        });
    }
    const message = world.messagePayload(
      channel,
      { id: world.snowflake(), author: world.bot, content, type: reference ? 19 : 0 },
      { attachments: [], ...(reference ? { reference } : {}) },
    );
    if (body.nonce !== undefined) message.nonce = body.nonce;
    world.history.set(channelId, [...(world.history.get(channelId) ?? []), message]);
    if (nonceKey) nonces.set(nonceKey, { at: Date.now(), message });
    posted.push({ channelId, body, message });
    o.onPost?.({ channelId, body, message });
    gateway.dispatch("MESSAGE_CREATE", world.asSent(message));
    return json(200, restSent(message));
  };

  /**
   * As Discord does: only the bot's own message can be edited (50005), 2,000 characters at most (50035);
   * the message changes in history, `edited_timestamp` is set and MESSAGE_UPDATE goes out.
   */
  const editMessage = (channelId: string, messageId: string, body: Record<string, unknown>): Response => {
    const list = world.history.get(channelId) ?? [];
    const i = list.findIndex((m) => m.id === messageId);
    const old = list[i];
    if (!old) return error(404, 10008, "Unknown Message");
    if ((old.author as { id?: string })?.id !== world.bot.id)
      return error(403, 50005, "Cannot edit a message authored by another user");
    const content = typeof body.content === "string" ? body.content : String(old.content ?? "");
    if (content.length > 2000) return error(400, 50035, "Invalid Form Body");
    const edited = { ...old, content, edited_timestamp: new Date().toISOString() };
    list[i] = edited;
    edits.push({ channelId, messageId, content });
    gateway.dispatch("MESSAGE_UPDATE", world.asSent(edited));
    return json(200, restSent(edited));
  };

  /**
   * The bot's own reaction, added (PUT) or removed (DELETE): a custom emoji this world does not know is
   * 10014; adding twice or removing what is not there changes nothing (204), as on Discord; a change goes
   * out as MESSAGE_REACTION_ADD/_REMOVE.
   */
  const ownReaction = (channelId: string, messageId: string, emoji: string, add: boolean): Response => {
    const channel = world.channel(channelId);
    if (!(world.history.get(channelId) ?? []).some((m) => m.id === messageId))
      return error(404, 10008, "Unknown Message");
    const decoded = decodeURIComponent(emoji);
    // The route names a custom emoji `name:id` (animated or not), a Unicode one by itself.
    const custom = /^([^:]+):(\d+)$/.exec(decoded);
    if (custom && !KNOWN_CUSTOM_EMOJI.test(custom[1] ?? "")) return error(400, 10014, "Unknown Emoji");
    const key = `${channelId}:${messageId}:${decoded}`;
    const had = reactions.has(key);
    if (add) reactions.add(key);
    else reactions.delete(key);
    reactionCalls.push({ channelId, messageId, emoji: decoded, add });
    if (had !== add)
      gateway.dispatch(add ? "MESSAGE_REACTION_ADD" : "MESSAGE_REACTION_REMOVE", {
        user_id: world.bot.id,
        channel_id: channelId,
        message_id: messageId,
        emoji: custom ? { id: custom[2], name: custom[1], animated: false } : { id: null, name: decoded },
        ...(channel?.guildId ? { guild_id: channel.guildId } : {}),
      });
    return new Response(null, { status: 204 });
  };

  /**
   * Newest first, also with `after` (then the `limit` messages right after it); the anchor is `before`,
   * `after` or none (the newest). Replies carry their original as it is now (null once deleted).
   */
  const historyOf = (channelId: string, q: Record<string, string>): Response => {
    const channel = world.channel(channelId);
    if (!channel) return error(404, 10003, "Unknown Channel");
    const access = channel.guildId ? world.accessOf(channel) : "open";
    if (access === "hidden") return missingAccess();
    if (access === "no-history") return json(200, []);
    const limit = Math.min(100, Math.max(1, Number(q.limit ?? 50)));
    const all = world.history.get(channelId) ?? [];
    const id = (m: Payload) => BigInt(m.id as string);
    let page: Payload[];
    if (q.after) page = all.filter((m) => id(m) > BigInt(q.after as string)).slice(0, limit);
    else if (q.before) page = all.filter((m) => id(m) < BigInt(q.before as string)).slice(-limit);
    else page = all.slice(-limit);
    return json(200, page.reverse().map(restSent));
  };

  const route = (r: RecordedRequest): Response => {
    const p = r.path.split("/").filter(Boolean);
    const ch = p[0] === "channels" ? world.channel(p[1] ?? "") : undefined;
    if (r.method === "GET" && r.path === "/gateway/bot")
      return json(200, {
        url: o.gatewayUrl(),
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
      });
    if (r.method === "GET" && r.path === "/users/@me") return json(200, world.userPayload(world.bot));
    if (r.method === "GET" && r.path === "/applications/@me")
      return json(200, {
        id: world.application.id,
        name: world.bot.username,
        // GATEWAY_MESSAGE_CONTENT_LIMITED (a bot in fewer than 100 servers) when the intent is on.
        flags: o.messageContentIntent ? 1 << 19 : 0,
        bot: world.userPayload(world.bot),
      });
    if (r.method === "POST" && r.path === "/users/@me/channels") {
      const recipient = world.users.get(String((r.body as { recipient_id?: string })?.recipient_id));
      if (!recipient) return error(400, 50035, "Invalid Form Body");
      const existing = [...world.channels.values()].find(
        (c) => c.type === 1 && c.recipient?.id === recipient.id,
      );
      return json(200, world.channelPayload(existing ?? dmChannel(recipient)));
    }
    if (p[0] === "channels" && p.length === 2 && r.method === "GET")
      return ch ? json(200, world.channelPayload(ch)) : error(404, 10003, "Unknown Channel");
    if (p[0] === "channels" && p[2] === "typing" && r.method === "POST")
      return ch ? new Response(null, { status: 204 }) : error(404, 10003, "Unknown Channel");
    if (p[0] === "channels" && p[2] === "messages" && p.length === 3) {
      if (r.method === "POST")
        return createMessage(p[1] as string, (r.body ?? {}) as Record<string, unknown>);
      if (r.method === "GET") return historyOf(p[1] as string, r.query);
    }
    if (p[0] === "channels" && p[2] === "messages" && p.length === 4 && r.method === "PATCH")
      return editMessage(p[1] as string, p[3] as string, (r.body ?? {}) as Record<string, unknown>);
    if (
      p[0] === "channels" &&
      p[2] === "messages" &&
      p[4] === "reactions" &&
      p[6] === "@me" &&
      p.length === 7
    )
      if (r.method === "PUT" || r.method === "DELETE")
        return ownReaction(p[1] as string, p[3] as string, p[5] as string, r.method === "PUT");
    if (p[0] === "channels" && p[2] === "messages" && p.length === 4 && r.method === "GET") {
      const m = (world.history.get(p[1] as string) ?? []).find((x) => x.id === p[3]);
      return m ? json(200, restSent(m)) : error(404, 10008, "Unknown Message");
    }
    return error(404, 0, "404: Not Found");
  };

  const dmChannel = (recipient: FakeUser) => {
    const c = { id: world.snowflake(), type: 1, recipient };
    world.channels.set(c.id, c);
    return c;
  };

  return {
    requests,
    posted,
    edits,
    reactionCalls,
    cdnHits,
    dmChannel,
    fail: (rule: FailureRule) => rules.push({ ...rule, left: rule.times ?? 1 }),
    clearFailures: () => rules.splice(0),
    async api(req: Request, path: string, url: URL): Promise<Response> {
      const text = req.method === "GET" ? "" : await req.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      const r: RecordedRequest = {
        method: req.method,
        path,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries(req.headers),
        body,
        at: Date.now(),
      };
      requests.push(r);
      if (req.headers.get("authorization") !== `Bot ${o.token}`) return error(401, 0, "401: Unauthorized");
      const rule = ruleFor(r);
      if (rule?.hang === true) return hang(req.signal);
      if (rule && rule.hang !== "after-create")
        return json(rule.status, rule.body ?? { message: `${rule.status}: injected`, code: 0 }, {
          ...rule.headers,
        });
      const res = route(r);
      return rule?.hang === "after-create" ? hang(req.signal) : res;
    },
    cdn(path: string): Response {
      cdnHits.push(path);
      const file = world.files.get(path.split("/")[3] ?? "");
      if (!file || file.expired) return new Response("This content is no longer available.", { status: 404 });
      return new Response(file.bytes, { headers: { "content-type": file.contentType } });
    },
    stop: () => {
      for (const done of [...hangs]) done();
    },
  };
}

export type FakeRest = ReturnType<typeof createRest>;
