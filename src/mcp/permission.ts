/**
 * Permission prompts answered from the phone (extensions.md §3), the pure part: the prompt's text (the
 * input preview cut at PREVIEW_MAX characters, as text only), the reply rule, and the pending requests
 * with their expiry, where the first answer in a channel the prompt went to wins and every other is none.
 */

export const PERMISSION_CAPABILITY = "claude/channel/permission";
export const PERMISSION_REQUEST_METHOD = "notifications/claude/channel/permission_request";
export const PERMISSION_METHOD = "notifications/claude/channel/permission";
/** Claude Code's request ids are five letters a–z without `l`. */
export const PERMISSION_REPLY = /^\s*(y|yes|n|no)\s+([a-km-z]{5})\s*$/i;
export const PENDING_TTL_MS = 10 * 60_000;
export const PREVIEW_MAX = 400;

export interface PermissionRequest {
  request_id: string;
  tool_name: string;
  description: string;
  input_preview: string;
}

export type Behavior = "allow" | "deny";

/** The message sent to the owner: who asks for what, the input cut at PREVIEW_MAX, how to answer. */
export function promptText(r: PermissionRequest): string {
  const preview = [...r.input_preview];
  const cut = preview.length > PREVIEW_MAX ? `${preview.slice(0, PREVIEW_MAX).join("")}…` : r.input_preview;
  return [
    `Claude wants to use ${r.tool_name}: ${r.description}`,
    ...(cut.trim() === "" ? [] : [cut]),
    `Reply "yes ${r.request_id}" or "no ${r.request_id}".`,
  ].join("\n");
}

/** The answer a message's text gives, or null when it is not one. */
export function replyOf(text: string): { requestId: string; behavior: Behavior } | null {
  const m = PERMISSION_REPLY.exec(text);
  if (!m) return null;
  const word = (m[1] as string).toLowerCase();
  return { requestId: (m[2] as string).toLowerCase(), behavior: word.startsWith("y") ? "allow" : "deny" };
}

/** Requests waiting for the owner: an answer counts once, in a channel its prompt went to, before expiry. */
export function createPendingRequests(now: () => number, ttlMs = PENDING_TTL_MS) {
  const pending = new Map<string, { expiresAt: number; channels: Set<string> }>();
  const prune = () => {
    for (const [id, p] of pending) if (p.expiresAt <= now()) pending.delete(id);
  };
  return {
    /** Waits for an answer to `requestId` from these channels (a repeated request adds channels). */
    add(requestId: string, channels: readonly string[]): void {
      prune();
      const id = requestId.toLowerCase();
      const p = pending.get(id) ?? { expiresAt: now() + ttlMs, channels: new Set<string>() };
      for (const c of channels) p.channels.add(c);
      pending.set(id, p);
    },
    /** True once: the first answer to a pending, unexpired request from one of its channels. */
    settle(requestId: string, channelId: string): boolean {
      prune();
      const p = pending.get(requestId);
      if (!p?.channels.has(channelId)) return false;
      pending.delete(requestId);
      return true;
    },
    size: () => pending.size,
  };
}
