/** Tool `list_unread_messages` -> GET /messages/unread (spec A, H). */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { envelopeList } from "./schemas.ts";

export const listUnreadMessages = {
  name: "list_unread_messages",
  config: {
    title: "List unread messages",
    description:
      "Returns messages you (this agent) have not marked read yet, oldest first, from people on the owner's allowlist; " +
      "messages from unknown senders are quarantined and never appear here. Each message has an id, source " +
      "(device_messenger = iMessage, community_chat = Discord), channel_id (where to reply), sender, text, attachments " +
      "(URLs on the gateway), reply_to, timestamp and direction. Call it to see what needs an answer; pass `next_since` " +
      "from the result as `since` to continue after the newest message you got. Mark handled messages with mark_read.",
    inputSchema: {
      since: z.string().optional().describe("ISO 8601 / RFC 3339 time; only messages after it."),
      source: z.enum(["device_messenger", "community_chat"]).optional().describe("Only one platform."),
      channel_id: z.string().optional().describe("Only one conversation."),
      limit: z.number().int().min(1).max(100).optional().describe("How many, 1 to 100 (default 20)."),
    },
    outputSchema: { messages: envelopeList, next_since: z.string() },
  },
  handler:
    (api: ApiClient) =>
    async (args: { since?: string; source?: string; channel_id?: string; limit?: number }) =>
      toToolResult(await api.call("GET", "/messages/unread", { query: args })),
};
