/**
 * The MCP server of `gw mcp`: name `gw`, the binary's version, and exactly the four tools of spec H,
 * each one HTTP request through the ApiClient. Input validation (ranges, the message id pattern,
 * exactly one of url/path) happens in the SDK before any request is made. As a Claude Code channel it
 * also declares the `claude/channel` capability and the channel's instructions (channel.ts pushes).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ApiClient } from "./api-client.ts";
import { CHANNEL_CAPABILITY, CHANNEL_INSTRUCTIONS } from "./channel.ts";
import { getMessageContext } from "./tools/get-message-context.ts";
import { listUnreadMessages } from "./tools/list-unread-messages.ts";
import { markRead } from "./tools/mark-read.ts";
import { sendMessage } from "./tools/send-message.ts";

export function createMcpServer(
  api: ApiClient,
  version: string,
  opts: { channel?: boolean } = {},
): McpServer {
  const server = new McpServer(
    { name: "gw", version },
    opts.channel
      ? { capabilities: { experimental: { [CHANNEL_CAPABILITY]: {} } }, instructions: CHANNEL_INSTRUCTIONS }
      : {},
  );
  server.registerTool(listUnreadMessages.name, listUnreadMessages.config, listUnreadMessages.handler(api));
  server.registerTool(sendMessage.name, sendMessage.config, sendMessage.handler(api));
  server.registerTool(markRead.name, markRead.config, markRead.handler(api));
  server.registerTool(getMessageContext.name, getMessageContext.config, getMessageContext.handler(api));
  return server;
}
