/** Tool `search_messages` -> GET /messages/search with X-Agent-ID (extensions.md §2). */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { envelopeList, sourceFilter } from "./schemas.ts";

export const searchMessages = {
  name: "search_messages",
  config: {
    title: "Search messages",
    description:
      "Full-text search over the messages you can see (current text after edits; never quarantined or unsent ones), " +
      "best match first. q is plain words: quotes, *, - and OR are searched as text, not as query syntax. Narrow " +
      "it with source or channel_id. Returns whole messages, as list_unread_messages does.",
    inputSchema: {
      q: z.string().min(1).max(200).describe("The words to find, 1 to 200 characters."),
      source: sourceFilter,
      channel_id: z.string().optional().describe("Only one conversation."),
      limit: z.number().int().min(1).max(100).optional().describe("How many, 1 to 100 (default 20)."),
    },
    outputSchema: z.looseObject({ messages: envelopeList }),
  },
  handler:
    (api: ApiClient) => async (args: { q: string; source?: string; channel_id?: string; limit?: number }) =>
      toToolResult(await api.call("GET", "/messages/search", { query: args })),
};
