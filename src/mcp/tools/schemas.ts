/** Input pieces shared by the tools (spec H, extensions.md §2), as zod schemas the MCP SDK turns into JSON Schema. */
import { z } from "zod";
import { MESSAGE_ID_PATTERN } from "../../core/ids.ts";

export const messageId = z
  .string()
  .regex(new RegExp(MESSAGE_ID_PATTERN), "a message id: msg_ + 26 characters");
export const envelopeList = z.array(z.record(z.string(), z.unknown()));
export const sourceFilter = z
  .enum(["device_messenger", "community_chat"])
  .optional()
  .describe("Only one platform: device_messenger (iMessage) or community_chat (Discord).");
