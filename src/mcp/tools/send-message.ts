/** Tool `send_message` -> POST /messages/send with a fresh UUIDv4 Idempotency-Key per call (spec E, H). */
import { z } from "zod";
import type { ApiClient } from "../api-client.ts";
import { toToolResult } from "../api-client.ts";
import { messageId } from "./schemas.ts";

const attachment = z.union([
  z.object({ url: z.string().describe("A gateway attachment URL from a received message.") }).strict(),
  z.object({ path: z.string().describe("An absolute path of a local file.") }).strict(),
]);

export const sendMessage = {
  name: "send_message",
  config: {
    title: "Send a message",
    description:
      "Sends a message for the owner to a conversation that has already written in (use the channel_id of a received " +
      "message). The text goes to real people through iMessage or Discord, so write exactly what should be sent. " +
      "Optional reply_to threads it under a message; attachments are either a gateway URL of a received attachment " +
      "or an absolute local file path (iMessage only, first one only; Discord channels take no attachments). Each call " +
      "sends once and is never retried by the gateway; if a call fails with a timeout, check the conversation with " +
      "get_message_context before calling again, or the message may go out twice. Sends are rate limited per channel " +
      "(RATE_LIMITED says how long to wait).",
    inputSchema: {
      channel_id: z.string().min(1).describe("Where to send: the channel_id of a received message."),
      text: z.string().describe("The message text (may be empty when sending an attachment)."),
      reply_to: messageId.optional().describe("Message id to reply to, in the same channel."),
      attachments: z.array(attachment).optional().describe("Each item has exactly one of url or path."),
    },
    outputSchema: { message_id: z.string(), sent_at: z.string() },
  },
  handler:
    (api: ApiClient, newKey: () => string = () => crypto.randomUUID()) =>
    async (args: {
      channel_id: string;
      text: string;
      reply_to?: string;
      attachments?: ({ url: string } | { path: string })[];
    }) =>
      toToolResult(await api.call("POST", "/messages/send", { body: args, idempotencyKey: newKey() })),
};
