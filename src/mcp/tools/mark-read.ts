/** Tool `mark_read` -> POST /messages/mark_read (spec D, H). */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { messageId } from "./schemas.ts";

export const markRead = {
  name: "mark_read",
  config: {
    title: "Mark messages read",
    description:
      "Marks messages as handled for you (this agent only; other agents still see them). They stop appearing in " +
      "list_unread_messages. Returns marked_count, the number of distinct ids you sent; unknown ids are counted and ignored.",
    inputSchema: { message_ids: z.array(messageId).describe("Ids of messages from list_unread_messages.") },
    outputSchema: { marked_count: z.number().int() },
  },
  handler: (api: ApiClient) => async (args: { message_ids: string[] }) =>
    toToolResult(await api.call("POST", "/messages/mark_read", { body: args })),
};
