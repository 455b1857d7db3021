/** Tool `list_channels` -> GET /channels with X-Agent-ID (extensions.md §2; `q` finds one by name, §6). */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { sourceFilter } from "./schemas.ts";

export const listChannels = {
  name: "list_channels",
  config: {
    title: "List conversations",
    description:
      "Lists the conversations with at least one message you can see, most recent activity first: channel_id (where " +
      "to send), source (device_messenger = iMessage, community_chat = Discord), channel_type (dm or group), a " +
      "readable name (people by their Contacts names), last_message_at and unread_count (messages you have not " +
      'marked read). To write to someone by name ("text Mom"), pass q: only conversations whose name or ' +
      "people match it.",
    inputSchema: {
      source: sourceFilter,
      q: z
        .string()
        .min(1)
        .max(100)
        .optional()
        .describe(
          "A name or part of one (case-insensitive), or a phone number, e-mail or id: finds the conversation.",
        ),
      limit: z.number().int().min(1).max(500).optional().describe("How many, 1 to 500 (default 100)."),
    },
    outputSchema: z.looseObject({ channels: z.array(z.record(z.string(), z.unknown())) }),
  },
  handler: (api: ApiClient) => async (args: { source?: string; q?: string; limit?: number }) =>
    toToolResult(await api.call("GET", "/channels", { query: args })),
};
