/**
 * Child process of bench/pickup/pickup.ts and bench/idle/idle.ts: the Claude Code side of a channel, i.e. an MCP
 * stdio server started as Claude Code starts it and connected with the official MCP SDK `Client` over
 * `StdioClientTransport`, timestamping each `notifications/claude/channel` notification.
 *
 *   claude: BENCH_CHAT_DB=… BENCH_CLAUDE_SERVER=…/server.ts BENCH_CLAUDE_STATE=… bun run bench/pickup/channel.ts claude
 *     The Claude Code iMessage plugin's server.ts (extracted by lib/claude-plugin.ts; never part of this
 *     repository), run with this Bun. It finds chat.db through IMESSAGE_DB_PATH and its access list
 *     through IMESSAGE_STATE_DIR/access.json (the parent allowlists the friend); it polls chat.db every
 *     1000 ms (`SELECT … WHERE ROWID > watermark`) and pushes each allowed message.
 *   gw: BENCH_GW_PORT=… BENCH_TOKEN=… BENCH_AGENT_ID=… bun run bench/pickup/channel.ts gw
 *     `gw mcp --channel` from source against the gw serve on that port (it follows the unread long poll).
 *
 * Prints `{"ready":0,"pluginPid":…}` once the MCP handshake is done, then
 * `{"seen":<content>,"t":<now>}` for every channel notification at the instant the client dispatches it,
 * and answers the commands of lib/child-protocol.ts (stop closes the client, which ends the plugin).
 */
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const PATH = process.env.PATH ?? "/usr/bin:/bin";
const env = (names: string[]) => {
  const missing = names.filter((n) => !process.env[n]);
  if (missing.length > 0) {
    process.stderr.write(`${missing.join(", ")} required\n`);
    process.exit(2);
  }
  return names.map((n) => process.env[n] as string);
};

function serverOf(mode: string | undefined): StdioServerParameters {
  if (mode === "claude") {
    const [chatDb, server, state] = env(["BENCH_CHAT_DB", "BENCH_CLAUDE_SERVER", "BENCH_CLAUDE_STATE"]);
    return {
      command: process.execPath,
      args: [server as string],
      cwd: dirname(server as string),
      env: {
        PATH,
        HOME: process.env.HOME ?? dirname(server as string),
        IMESSAGE_DB_PATH: chatDb as string,
        IMESSAGE_STATE_DIR: state as string,
      },
    };
  }
  if (mode === "gw") {
    const [port, token, agent] = env(["BENCH_GW_PORT", "BENCH_TOKEN", "BENCH_AGENT_ID"]);
    const home = process.env.HOME ?? "/tmp";
    return {
      command: process.execPath,
      args: [join(import.meta.dir, "../../src/main.ts"), "mcp", "--channel"],
      cwd: home,
      env: {
        PATH,
        HOME: home,
        GW_LOG_DIR: join(home, "logs-mcp"),
        GW_BEARER_TOKEN: token as string,
        GW_AGENT_ID: agent as string,
        GW_BASE_URL: `http://127.0.0.1:${port}`,
      },
    };
  }
  process.stderr.write("usage: bun run bench/pickup/channel.ts <claude|gw>\n");
  process.exit(2);
}

const transport = new StdioClientTransport({ ...serverOf(process.argv[2]), stderr: "inherit" });
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
