/**
 * A fake agent program for the receiver's tests, used as GW_RECEIVER_AGENT_BIN through a wrapper
 * (fakeAgentProgram) that passes a record file first. It reads one envelope, or a JSON array of them (a
 * batched run), after the preamble. It appends JSON lines to that file: `start`
 * (argv as the receiver built it, environment, stdin, working directory, pid, parent pid (the receiver)
 * and process group, the MCP config file and its mode), `grandchild` (pid), `tools` (what the gw tools
 * answered) and `end`. What it does comes from the message texts on stdin, words separated by spaces:
 *   sleep=<ms>    wait before ending          exit=<code>   end with that code
 *   grandchild    start a child that ignores SIGTERM and sleeps, then wait
 *   hang-once     as grandchild, unless the preamble says an earlier run was interrupted: then end
 *   ignore-term   ignore SIGTERM itself
 *   callback      start the MCP server of its config (gw mcp) with the official MCP client, then
 *                 list_unread_messages, send_message("re: <text>") to the envelope's channel, mark_read
 */
import { appendFileSync, readFileSync, statSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [record, ...argv] = process.argv.slice(2) as [string, ...string[]];
const now = () => performance.timeOrigin + performance.now();
const write = (event: string, data: Record<string, unknown> = {}) =>
  appendFileSync(record, `${JSON.stringify({ event, t: now(), pid: process.pid, ...data })}\n`);

type Envelope = { id: string; channel_id: string; text: string };
const stdin = await Bun.stdin.text();
// The body starts at the first line opening an object (one envelope) or an array (a batch of them).
const bodyAt = stdin.search(/^[[{]/m);
const body = JSON.parse(stdin.slice(bodyAt)) as Envelope | Envelope[];
const envelopes = Array.isArray(body) ? body : [body];
const envelope = envelopes[0] as Envelope;
const words = envelopes.flatMap((e) => e.text.split(/\s+/));
const arg = (name: string) => words.find((w) => w.startsWith(`${name}=`))?.slice(name.length + 1);
const configPath = argv[argv.indexOf("--mcp-config") + 1] as string;
const stat = readFileSync("/proc/self/stat", "utf8");
write("start", {
  argv,
  env: process.env,
  stdin,
  cwd: process.cwd(),
  ppid: process.ppid,
  pgid: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]),
  mcpConfig: JSON.parse(readFileSync(configPath, "utf8")),
  mcpConfigMode: statSync(configPath).mode & 0o777,
});

const rerun = stdin.slice(0, bodyAt).includes("interrupted");
const hang = words.includes("grandchild") || (words.includes("hang-once") && !rerun);
if (words.includes("ignore-term")) process.on("SIGTERM", () => write("ignored-term"));
if (hang) {
  const child = Bun.spawn(["sh", "-c", "trap '' TERM; sleep 60"], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  write("grandchild", { child: child.pid });
}
if (words.includes("callback")) {
  const server = (
    JSON.parse(readFileSync(configPath, "utf8")) as {
      mcpServers: { gw: { command: string; args: string[]; env: Record<string, string> } };
    }
  ).mcpServers.gw;
  const client = new Client({ name: "fake-agent", version: "0" });
  await client.connect(
    new StdioClientTransport({ command: server.command, args: server.args, env: server.env }),
  );
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent?: unknown };
  const unread = await call("list_unread_messages", { channel_id: envelope.channel_id });
  const sent = await call("send_message", { channel_id: envelope.channel_id, text: `re: ${envelope.text}` });
  const marked = await call("mark_read", { message_ids: [envelope.id] });
  write("tools", { unread, sent, marked });
  await client.close();
}
const sleep = Number(arg("sleep") ?? 0);
if (sleep > 0 || hang) await Bun.sleep(sleep || 60_000);
write("end");
process.exit(Number(arg("exit") ?? 0));
