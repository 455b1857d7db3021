/**
 * The official MCP SDK client running `gw mcp` from source over stdio, as Claude Code would: a fresh HOME,
 * log dir and TMPDIR (get_attachment's cache) per client; channel notifications are collected in `pushed`.
 * The caller closes every client it opened (`closeAll`).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CHANNEL_METHOD } from "../../src/mcp/channel.ts";
import { ROOT } from "./process.ts";
import { tempDir } from "./temp.ts";

export type Pushed = { content: string; meta: Record<string, string> };

export type ToolContent = { type: string; text?: string; data?: string; mimeType?: string };
export type ToolResult = {
  content: ToolContent[];
  structuredContent?: Record<string, unknown>;
  data?: unknown;
  isError?: boolean;
};

export interface McpHandle {
  client: Client;
  pushed: Pushed[];
  /** The client process's TMPDIR. */
  tmp: string;
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  /** What the process wrote to stderr so far (its log lines). */
  stderr(): string;
}

const open: Client[] = [];

export async function connectMcp(args: string[], env: Record<string, string>): Promise<McpHandle> {
  const home = tempDir();
  const tmp = join(home, "tmp");
  mkdirSync(tmp);
  const pushed: Pushed[] = [];
  const client = new Client({ name: "gw-test", version: "1.0.0" });
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === CHANNEL_METHOD) pushed.push(n.params as Pushed);
  };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, "src/main.ts"), "mcp", ...args],
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      TMPDIR: tmp,
      GW_LOG_DIR: join(home, "logs"),
      ...env,
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await client.connect(transport);
  open.push(client);
  const call = async (name: string, a: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: a })) as unknown as ToolResult;
  return { client, pushed, tmp, call, stderr: () => stderr };
}

export async function closeAll(): Promise<void> {
  for (const c of open.splice(0)) await c.close();
}

export const toolNames = async (h: McpHandle): Promise<string[]> =>
  (await h.client.listTools()).tools.map((t) => t.name).sort();
