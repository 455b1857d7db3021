/** Tool `edit_message` -> POST /messages/edit (extensions.md §2): the text of gw's own Discord message. */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { messageId } from "./schemas.ts";

/** Discord's message length, also the route's limit. */
export const EDIT_MAX_CHARS = 2000;

export const editMessage = {
  name: "edit_message",
  config: {
    title: "Edit a sent message",
    description:
      "Replaces the text of a message this gateway sent earlier (its message_id from send_message). Discord only, " +
      "and only messages sent as one part: someone else's message or a split one is refused; iMessage answers " +
      "PLATFORM_UNSUPPORTED. The people in the conversation see the message change.",
    inputSchema: {
      message_id: messageId.describe("A message gw sent (send_message's message_id)."),
      text: z.string().max(EDIT_MAX_CHARS).describe("The new text, at most 2000 characters."),
    },
    outputSchema: z.looseObject({ message_id: z.string(), edited_at: z.string() }),
  },
  handler: (api: ApiClient) => async (args: { message_id: string; text: string }) =>
    toToolResult(await api.call("POST", "/messages/edit", { body: args })),
};
