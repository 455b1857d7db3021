/**
 * The phone approval's runner (extensions.md §3) inside `gw mcp --channel` with GW_MCP_OWNER: a permission
 * request goes, through POST /messages/send, to each one-to-one channel of the owner that gw has seen (an
 * Idempotency-Key per request and channel, kept while gw serve may not have the request, renewed after a
 * 5xx answer: sendKey); `take` turns the owner's answer in one of those channels into the verdict
 * notification, marks it read for the agent and, on Discord, reacts ✅/❌. Pending requests live in this
 * process, so a restart of `gw serve` loses none. A re-send after an uncertain 502 (a timeout towards the
 * platform) may, rarely, post the prompt twice: accepted, since a prompt never delivered is worse.
 */
import { createHash } from "node:crypto";
import { authenticated } from "../allowlist/services.ts";
import type { Envelope } from "../core/envelope.ts";
import type { Logger } from "../core/ports.ts";
import type { ApiClient, ApiResponse } from "./api-client.ts";
import { retryAfterS } from "./backoff.ts";
import {
  createPendingRequests,
  PERMISSION_METHOD,
  type PermissionRequest,
  promptText,
  replyOf,
} from "./permission.ts";

/** Tries of one prompt post, and the pause before each. */
const SEND_DELAYS_MS = [0, 500, 2_000, 2_000, 2_000];

export interface RelayDeps {
  api: ApiClient;
  /** GW_MCP_OWNER: the allowlisted person who answers. */
  owner: string;
  /** GW_AGENT_ID: an answer is marked read for it. */
  agentId: string;
  /** GW_MCP_APPROVAL_EXPIRY_S in ms: how long a prompt waits for its answer. */
  expiryMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  notify: (n: { method: typeof PERMISSION_METHOD; params: Record<string, string> }) => Promise<void>;
  log: Logger;
}

const failed = (r: ApiResponse) => r.status === 0 || r.status >= 500;

/** A 429's wait, from its `Retry-After` or envelope's `retry_after_s` (at most a minute). */
function retryAfterMs(r: ApiResponse): number {
  return Math.min(60, retryAfterS(r) ?? 1) * 1000;
}

/**
 * The Idempotency-Key of try `tryNo` (0 = first) of one prompt post, given the key and status of the try
 * before. The same key while gw serve may not have received the request (status 0: no answer) and after a
 * 429 (nothing sent, key released): a replay then never posts twice. After a 5xx answer the service keeps
 * that failure under the key and would replay it, so the next try is a new send: `<base>:<tryNo>`. Pure.
 */
export function sendKey(
  base: string,
  tryNo: number,
  previous: { key: string; status: number } | null,
): string {
  if (previous === null) return base;
  return previous.status >= 500 ? `${base}:${tryNo}` : previous.key;
}

export function createPermissionRelay(d: RelayDeps) {
  const pending = createPendingRequests(d.now, d.expiryMs);

  /** The owner's one-to-one channels gw has seen; null when gw serve did not answer. */
  const ownerChannels = async (): Promise<string[] | null> => {
    const res = await d.api.call("GET", "/channels", { query: { person_id: d.owner, limit: 500 } });
    if (!res.ok) return null;
    const list = (res.body as { channels: { channel_id: string; channel_type: string }[] }).channels;
    return list.filter((c) => c.channel_type === "dm").map((c) => c.channel_id);
  };

  /**
   * Posts one prompt, trying again while gw serve cannot be reached or fails, or asks to wait (429: the
   * channel's rate limit, waited out); sendKey picks each try's Idempotency-Key.
   */
  const post = async (channelId: string, text: string, requestId: string): Promise<void> => {
    const base = `gw-permission:${requestId}:${createHash("sha256").update(channelId).digest("hex").slice(0, 32)}`;
    let res: ApiResponse | null = null;
    let previous: { key: string; status: number } | null = null;
    for (const [tryNo, ms] of SEND_DELAYS_MS.entries()) {
      await d.sleep(ms);
      const key = sendKey(base, tryNo, previous);
      res = await d.api.call("POST", "/messages/send", {
        body: { channel_id: channelId, text },
        idempotencyKey: key,
      });
      previous = { key, status: res.status };
      if (res.status === 429) await d.sleep(retryAfterMs(res));
      else if (!failed(res)) break;
    }
    if (res && !res.ok)
      d.log.warn(
        { channel_id: channelId, request_id: requestId, status: res.status, body: res.body },
        "permission prompt not sent",
      );
  };

  return {
    ownerChannels,
    /** Sends the prompt to each of the owner's one-to-one channels, once each. */
    async relay(req: PermissionRequest): Promise<void> {
      const channels = await ownerChannels();
      if (!channels || channels.length === 0) {
        d.log.warn(
          { request_id: req.request_id },
          "permission request not relayed: the owner has no one-to-one channel gw has seen",
        );
        return;
      }
      // Pending first: an answer may come back before the last post returns.
      pending.add(req.request_id, channels);
      const text = promptText(req);
      await Promise.all(channels.map((c) => post(c, text, req.request_id)));
    },
    /**
     * True when `m` is the owner's first answer to a pending request in a channel its prompt went to:
     * the verdict is sent, the message marked read for the agent (the caller does not push it).
     */
    async take(m: Envelope): Promise<boolean> {
      if (m.sender.person_id !== d.owner || m.channel_type !== "dm" || !authenticated(m)) return false;
      const reply = replyOf(m.text);
      if (!reply || !pending.settle(reply.requestId, m.channel_id)) return false;
      await d.notify({
        method: PERMISSION_METHOD,
        params: { request_id: reply.requestId, behavior: reply.behavior },
      });
      await d.api.call("POST", "/messages/mark_read", { agentId: d.agentId, body: { message_ids: [m.id] } });
      if (m.source === "community_chat")
        await d.api.call("POST", "/messages/react", {
          body: { message_id: m.id, emoji: reply.behavior === "allow" ? "✅" : "❌" },
        });
      return true;
    },
  };
}

export type PermissionRelay = ReturnType<typeof createPermissionRelay>;
