/** Tool `react` -> POST /messages/react (extensions.md §2): add or remove one reaction; Discord only. */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { messageId } from "./schemas.ts";

export const react = {
  name: "react",
  config: {
    title: "React to a message",
    description:
      "Adds an emoji reaction to a message as the owner's bot, or removes it with remove: true. Discord only: " +
      "iMessage answers PLATFORM_UNSUPPORTED. The emoji is a Unicode emoji (👍) or a Discord custom emoji " +
      "(<:name:id>). Reacting again with the same emoji changes nothing. Reactions are rate limited per channel " +
      "like sends.",
    inputSchema: {
      message_id: messageId.describe("The message to react to."),
      emoji: z.string().min(1).describe("A Unicode emoji, or a Discord custom emoji <:name:id>."),
      remove: z.boolean().optional().describe("true removes the bot's reaction instead of adding it."),
    },
    outputSchema: z.looseObject({ message_id: z.string(), emoji: z.string(), removed: z.boolean() }),
  },
  handler: (api: ApiClient) => async (args: { message_id: string; emoji: string; remove?: boolean }) =>
    toToolResult(await api.call("POST", "/messages/react", { body: args })),
};
