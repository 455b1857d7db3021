/** Tool `get_message_context` -> GET /messages/context (spec C, H). */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { envelopeList, messageId } from "./schemas.ts";

export const getMessageContext = {
  name: "get_message_context",
  config: {
    title: "Get the conversation around a message",
    description:
      "Returns the conversation around one message, oldest first: up to `before` earlier messages, the message itself, " +
      "and up to `after` later ones, including what was sent from the owner's side. Use it before replying to " +
      "understand the thread. Messages from quarantined senders are not shown.",
    inputSchema: {
      channel_id: z.string().min(1).describe("The message's channel_id."),
      around_message_id: messageId.describe("The message to center on."),
      before: z.number().int().min(0).max(50).default(5).describe("Earlier messages, 0 to 50 (default 5)."),
      after: z.number().int().min(0).max(50).default(5).describe("Later messages, 0 to 50 (default 5)."),
    },
    outputSchema: { messages: envelopeList },
  },
  handler:
    (api: ApiClient) =>
    async (args: { channel_id: string; around_message_id: string; before?: number; after?: number }) =>
      toToolResult(await api.call("GET", "/messages/context", { query: args })),
};
