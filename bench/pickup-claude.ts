/**
 * Child process of bench/pickup.ts and bench/idle.ts: the agent side of the Claude Code iMessage plugin.
 * It starts the plugin's server.ts (extracted by lib/claude-plugin.ts; never part of this repository)
 * with this Bun, as Claude Code would (stdio MCP server), connected with the official MCP SDK `Client`
 * over `StdioClientTransport`. The plugin finds chat.db through IMESSAGE_DB_PATH and its access list
 * through IMESSAGE_STATE_DIR/access.json (the parent allowlists the friend); it polls chat.db every
 * 1000 ms (`SELECT … WHERE ROWID > watermark`) and pushes each allowed message as an MCP
 * `notifications/claude/channel` notification.
 *
 *   BENCH_CHAT_DB=… BENCH_CLAUDE_SERVER=…/server.ts BENCH_CLAUDE_STATE=… HOME=… bun run bench/pickup-claude.ts
 *
 * Prints `{"ready":0,"pluginPid":…}` once the MCP handshake is done, then
 * `{"seen":<content>,"t":<now>}` for every channel notification at the instant the client dispatches it,
 * and answers the commands of lib/child-protocol.ts (stop closes the client, which ends the plugin).
 */
import { dirname } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { emit, now, serveCommands } from "./lib/child-protocol.ts";

const chatDb = process.env.BENCH_CHAT_DB ?? "";
const server = process.env.BENCH_CLAUDE_SERVER ?? "";
const state = process.env.BENCH_CLAUDE_STATE ?? "";
if (!chatDb || !server || !state) {
  process.stderr.write("BENCH_CHAT_DB, BENCH_CLAUDE_SERVER and BENCH_CLAUDE_STATE are required\n");
  process.exit(2);
}

const transport = new StdioClientTransport({
  command: process.execPath,
  args: [server],
  cwd: dirname(server),
  env: {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? dirname(server),
    IMESSAGE_DB_PATH: chatDb,
    IMESSAGE_STATE_DIR: state,
  },
  stderr: "inherit",
});
const client = new Client({ name: "gw-bench", version: "0.0.0" }, { capabilities: {} });
client.fallbackNotificationHandler = async (n) => {
  const t = now();
  if (n.method !== "notifications/claude/channel") return;
  const params = n.params as { content?: unknown; meta?: { message_id?: unknown } } | undefined;
  emit({ seen: String(params?.content ?? ""), t, id: String(params?.meta?.message_id ?? "") });
};
await client.connect(transport);
const caps = client.getServerCapabilities() as { experimental?: Record<string, unknown> } | undefined;
emit({ ready: 0, pluginPid: transport.pid, channel: caps?.experimental?.["claude/channel"] !== undefined });
await serveCommands(async () => {
  await client.close();
});
