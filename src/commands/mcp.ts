/**
 * `gw mcp`: the four agent tools over MCP stdio. stdout carries protocol frames only; logs go to
 * stderr and the log file. Needs GW_BEARER_TOKEN; GW_AGENT_ID names the agent (without it, per-agent
 * tools answer AGENT_ID_REQUIRED); GW_BASE_URL points at `gw serve`. Ends when the client closes stdin.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createApiClient } from "../mcp/api-client.ts";
import { createMcpServer } from "../mcp/server.ts";
import { VERSION } from "../version.ts";
import { type CommandContext, EXIT_OK } from "./exit.ts";
import { configOf, loggerOf } from "./setup.ts";

export async function mcp(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx);
  const log = loggerOf(config, ctx, { face: "mcp" });
  if (!config.agentId)
    log.warn({}, "GW_AGENT_ID is not set: unread, context and mark_read will answer AGENT_ID_REQUIRED");
  const api = createApiClient({
    baseUrl: config.baseUrl,
    token: config.bearerToken as string,
    agentId: config.agentId,
    fetch,
  });
  const server = createMcpServer(api, VERSION);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on("end", () => resolve());
  });
  await server.connect(transport);
  log.info({ base_url: config.baseUrl, agent_id: config.agentId }, "gw mcp ready on stdio");
  await closed;
  await server.close();
  return EXIT_OK;
}
