/**
 * bench/approval/approval.ts's world, set up as test/e2e/phone-approval.test.ts sets it up: the fake Discord in
 * this process (its onPost hook sights each prompt posted by the bot), a chat.db written as Messages
 * writes it (lib/chatdb.ts) and watched (sightings.ts), `gw serve` as a process of its own
 * (test/helpers/process.ts spawnGw) sending iMessages through the Messages stand-in (GW_OSASCRIPT_PATH),
 * and `gw mcp --channel` with GW_MCP_OWNER driven by the official MCP SDK Client in this process, as
 * Claude Code drives it (its permission verdicts and channel pushes are sighted on arrival).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { ChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { FAKE_BOT_TOKEN, type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { CHANNEL_METHOD } from "../../src/mcp/channel.ts";
import { PERMISSION_CAPABILITY, PERMISSION_METHOD } from "../../src/mcp/permission.ts";
import {
  freePort,
  type GwProcess,
  ROOT,
  spawnGw,
  standInProgram,
  stopGw,
  waitFor,
  waitForHealth,
} from "../../test/helpers/process.ts";
import { chatDbPathIn, FRIEND, FRIEND_CHAT, openBenchChatDb } from "../lib/chatdb.ts";
import { gwEnv } from "../lib/gw-env.ts";
import type { Session } from "../lib/session.ts";
import { TOKEN } from "../lib/settings.ts";
import { AGENT_ID, OWNER, progress, RATE_LIMIT_ENV } from "./settings.ts";
import { type ChatDbWatcher, createSightings, promptId, type Sightings, watchChatDb } from "./sightings.ts";

const PATH = process.env.PATH ?? "/usr/bin:/bin";

export interface World {
  fake: FakeDiscord;
  owner: ReturnType<FakeDiscord["user"]>;
  ownerDm: string;
  writer: ChatDbWriter;
  watcher: ChatDbWatcher;
  sightings: Sightings;
  /** The behavior of each verdict received, by request id. */
  verdicts: Map<string, string>;
  /** gw's channel ids of the owner's two one-to-one chats. */
  channels: { discord: string; imessage: string };
  base: string;
  serve: GwProcess;
  serveLog: string;
  mcp: { client: Client; pid: number | undefined; stderr(): string };
  close(): Promise<void>;
}

const entry = (source: string, id: string) =>
  `[[entry]]\nsource = "${source}"\nid = "${id}"\nperson_id = "${OWNER}"\ndisplay_name = "Ann"\n`;

/** gw serve on the chat.db and the fake, its stderr (warn and up) in a file; resolves once both connectors are ok. */
async function startServe(dir: string, chatDb: string, fake: FakeDiscord, ownerId: string) {
  const port = freePort();
  const env = gwEnv(dir, {
    GW_BIND_PORT: String(port),
    GW_CHAT_DB_PATH: chatDb,
    GW_OSASCRIPT_PATH: standInProgram(dir),
    GW_STANDIN_CHAT_DB: chatDb,
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
    GW_LOG_STDERR_LEVEL: "warn",
    ...RATE_LIMIT_ENV,
  });
  writeFileSync(
    env.GW_ALLOWLIST_PATH as string,
    entry("device_messenger", FRIEND) + entry("community_chat", ownerId),
  );
  const serveLog = join(dir, "serve-stderr.log");
  const serve = spawnGw(["serve"], { PATH, ...env }, { output: { stderrFile: serveLog } });
  await waitFor(
    async () => {
      const h = (await waitForHealth(port, 30_000)) as { connectors: Record<string, { state: string }> };
      const ok = (s: string) => h.connectors[s]?.state === "ok";
      return ok("community_chat") && ok("device_messenger") ? h : undefined;
    },
    "gw serve with both connectors ok",
    30_000,
  );
  return { serve, serveLog, base: `http://127.0.0.1:${port}` };
}

/** The owner's one-to-one chats, as gw lists them once it has seen a message in each. */
async function ownerChannels(base: string): Promise<World["channels"]> {
  return waitFor(async () => {
    const res = await fetch(`${base}/channels?person_id=${OWNER}`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": AGENT_ID },
    });
    const { channels } = (await res.json()) as { channels: { channel_id: string; source: string }[] };
    const of = (s: string) => channels.find((c) => c.source === s)?.channel_id;
    const discord = of("community_chat");
    const imessage = of("device_messenger");
    return discord && imessage ? { discord, imessage } : undefined;
  }, "the owner's two one-to-one channels");
}

/** `gw mcp --channel` with GW_MCP_OWNER under the MCP SDK Client; every notification sighted on arrival. */
async function startMcp(dir: string, base: string, sightings: Sightings, verdicts: Map<string, string>) {
  const home = join(dir, "mcp-home");
  mkdirSync(join(home, "tmp"), { recursive: true });
  const client = new Client({ name: "gw-bench", version: "0.0.0" }, { capabilities: {} });
  client.fallbackNotificationHandler = async (n) => {
    const t = performance.now();
    if (n.method === PERMISSION_METHOD) {
      const p = n.params as { request_id: string; behavior: string };
      verdicts.set(p.request_id, p.behavior);
      sightings.record(`verdict:${p.request_id}`, t);
    } else if (n.method === CHANNEL_METHOD) {
      sightings.record(`push:${(n.params as { content: string }).content}`, t);
    }
  };
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, "src/main.ts"), "mcp", "--channel"],
    env: {
      PATH,
      HOME: home,
      TMPDIR: join(home, "tmp"),
      GW_LOG_DIR: join(home, "logs"),
      GW_LOG_STDERR_LEVEL: "warn",
      GW_BEARER_TOKEN: TOKEN,
      GW_BASE_URL: base,
      GW_AGENT_ID: AGENT_ID,
      GW_MCP_OWNER: OWNER,
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8000);
  });
  await client.connect(transport);
  const caps = client.getServerCapabilities()?.experimental ?? {};
  if (!(PERMISSION_CAPABILITY in caps))
    throw new Error(`gw mcp did not declare ${PERMISSION_CAPABILITY}; its stderr:\n${stderr}`);
  return { client, pid: transport.pid ?? undefined, stderr: () => stderr };
}

export async function startWorld(session: Session): Promise<World> {
  const dir = session.tempDir("gw-bench-approval-");
  progress(`work dir ${dir}`);
  const sightings = createSightings();
  const verdicts = new Map<string, string>();
  const fake = await startFakeDiscord({
    onPost: (p) => {
      const t = performance.now();
      const id = promptId(String(p.body.content ?? ""));
      if (id) sightings.record(`discord:${id}`, t);
    },
  });
  const owner = fake.user({ username: "ann_user", global_name: "Ann" });
  const ownerDm = fake.dm(owner).id;
  const chatDb = chatDbPathIn(dir);
  const writer = openBenchChatDb(chatDb);
  const watcher = watchChatDb(chatDb, sightings);
  const { serve, serveLog, base } = await startServe(dir, chatDb, fake, owner.id);
  session.track(serve.proc);
  // The owner's chats, seen by gw before gw mcp starts (GW_MCP_OWNER needs one).
  fake.message(ownerDm, { author: owner, content: "hi bot" });
  writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hi from the phone" });
  const channels = await ownerChannels(base);
  const mcp = await startMcp(dir, base, sightings, verdicts);
  progress(`gw serve pid ${serve.proc.pid}, gw mcp pid ${mcp.pid}; owner chats ${JSON.stringify(channels)}`);
  return {
    fake,
    owner,
    ownerDm,
    writer,
    watcher,
    sightings,
    verdicts,
    channels,
    base,
    serve,
    serveLog,
    mcp,
    async close() {
      await mcp.client.close();
      await stopGw(serve, "SIGTERM", 5_000);
      watcher.close();
      writer.close();
      await fake.stop();
    },
  };
}

/** gw serve's warnings and errors (its stderr at warn), for the report. */
export const serveWarnings = (w: World): string[] =>
  readFileSync(w.serveLog, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
