/**
 * The MCP server of `gw mcp`: name `gw`, the binary's version, and exactly the four tools of spec H, each one
 * HTTP request through the ApiClient. With `extended` (extensions.md §2) five more, also one request each:
 * react, edit_message, list_channels, search_messages and get_attachment. Input validation happens in the
 * SDK before any request is made. As a Claude Code channel it also declares the `claude/channel` capability
 * and the channel's instructions (channel.ts pushes), and with phone approval `claude/channel/permission`,
 * handing each permission request to the relay; the command makes a channel extended.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ApiClient } from "./api-client.ts";
import { CHANNEL_CAPABILITY, CHANNEL_INSTRUCTIONS } from "./channel.ts";
import { PERMISSION_CAPABILITY, PERMISSION_REQUEST_METHOD, type PermissionRequest } from "./permission.ts";
import { editMessage } from "./tools/edit-message.ts";
import { type AttachmentDeps, getAttachment } from "./tools/get-attachment.ts";
import { getMessageContext } from "./tools/get-message-context.ts";
import { listChannels } from "./tools/list-channels.ts";
import { listUnreadMessages } from "./tools/list-unread-messages.ts";
import { markRead } from "./tools/mark-read.ts";
import { react } from "./tools/react.ts";
import { searchMessages } from "./tools/search-messages.ts";
import { sendMessage } from "./tools/send-message.ts";

const PermissionRequestSchema = z.object({
  method: z.literal(PERMISSION_REQUEST_METHOD),
  params: z.object({
    request_id: z.string(),
    tool_name: z.string(),
    description: z.string(),
    input_preview: z.string(),
  }),
});

export function createMcpServer(
  api: ApiClient,
  version: string,
  opts: {
    channel?: boolean;
    extended?: AttachmentDeps;
    /** Phone approval (extensions.md §3): the capability is declared and requests go here. */
    onPermissionRequest?: (r: PermissionRequest) => Promise<void>;
  } = {},
): McpServer {
  const experimental = {
    [CHANNEL_CAPABILITY]: {},
    ...(opts.onPermissionRequest ? { [PERMISSION_CAPABILITY]: {} } : {}),
  };
  const server = new McpServer(
    { name: "gw", version },
    opts.channel ? { capabilities: { experimental }, instructions: CHANNEL_INSTRUCTIONS } : {},
  );
  const relay = opts.onPermissionRequest;
  if (opts.channel && relay)
    server.server.setNotificationHandler(PermissionRequestSchema, ({ params }) => relay(params));
  server.registerTool(listUnreadMessages.name, listUnreadMessages.config, listUnreadMessages.handler(api));
  server.registerTool(sendMessage.name, sendMessage.config, sendMessage.handler(api));
  server.registerTool(markRead.name, markRead.config, markRead.handler(api));
  server.registerTool(getMessageContext.name, getMessageContext.config, getMessageContext.handler(api));
  if (opts.extended) registerExtended(server, api, opts.extended);
  return server;
}

function registerExtended(server: McpServer, api: ApiClient, attachments: AttachmentDeps): void {
  server.registerTool(react.name, react.config, react.handler(api));
  server.registerTool(editMessage.name, editMessage.config, editMessage.handler(api));
  server.registerTool(listChannels.name, listChannels.config, listChannels.handler(api));
  server.registerTool(searchMessages.name, searchMessages.config, searchMessages.handler(api));
  server.registerTool(getAttachment.name, getAttachment.config, getAttachment.handler(api, attachments));
}
