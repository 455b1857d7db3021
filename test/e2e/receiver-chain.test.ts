/**
 * The whole loop as users run it, from source and as the compiled binary: a Discord message reaches
 * `gw serve` (fake Discord), is pushed as a signed webhook to `gw receiver`, which runs the agent (the
 * fake agent); the agent calls back through `gw mcp` (started from the receiver's own program, with the
 * private MCP config): lists unread, replies, marks read — and the reply reaches Discord. Also the
 * receiver's configuration errors and a clean stop on SIGTERM.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import { FAKE_BOT_TOKEN, type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import {
  ensureBinary,
  freePort,
  type GwProcess,
  isolatedEnv,
  spawnGw,
  waitFor,
  waitForHealth,
} from "../helpers/process.ts";
import { type AgentRecord, fakeAgentProgram } from "../helpers/receiver.ts";
import { allowAnn } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

const SECRET = "chain-secret-0123456789abcdef";
const fakes: FakeDiscord[] = [];
const procs: GwProcess[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) {
    p.proc.kill("SIGKILL");
    await p.exited;
  }
  for (const f of fakes.splice(0)) await f.stop();
});

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();

test.each([false, true])(
  "gw serve → signed webhook → gw receiver → agent → gw mcp → Discord (compiled: %p)",
  async (binary) => {
    const fake = await startFakeDiscord();
    fakes.push(fake);
    const ann = fake.user({ username: "ann", global_name: "Ann" });
    const guild = fake.guild({ name: "Home" });
    const general = fake.channel(guild.id, { name: "general" });

    const dir = tempDir();
    mkdirSync(join(dir, "serve"));
    const servePort = freePort();
    const receiverPort = freePort();
    const serveEnv = isolatedEnv(join(dir, "serve"), {
      GW_BIND_PORT: String(servePort),
      GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
      GW_COMMUNITY_API_URL: fake.apiUrl,
      GW_WEBHOOK_URL: `http://127.0.0.1:${receiverPort}/webhook`,
      GW_WEBHOOK_SECRET: SECRET,
    });
    writeFileSync(serveEnv.GW_ALLOWLIST_PATH as string, allowAnn(ann.id));
    const agent = fakeAgentProgram(dir);
    const receiverEnv = {
      HOME: join(dir, "receiver"),
      GW_BEARER_TOKEN: serveEnv.GW_BEARER_TOKEN as string,
      GW_WEBHOOK_SECRET: SECRET,
      GW_LOG_DIR: join(dir, "receiver/logs"),
      GW_RECEIVER_BIND_PORT: String(receiverPort),
      GW_RECEIVER_AGENT_BIN: agent.bin,
      GW_BASE_URL: `http://127.0.0.1:${servePort}`,
    };
    const serve = spawnGw(["serve"], serveEnv, { binary });
    const receiver = spawnGw(["receiver"], receiverEnv, { binary });
    procs.push(serve, receiver);
    await waitFor(async () => {
      const h = (await waitForHealth(servePort)) as { connectors: { community_chat: { state: string } } };
      return h.connectors.community_chat.state === "ok" ? true : undefined;
    }, "gw serve connected to Discord");
    await waitForHealth(receiverPort);

    fake.message(general.id, { author: ann, content: "callback please" });
    const tools = await waitFor(
      () => agent.records().find((r) => r.event === "tools"),
      "the agent to call the gw tools",
      20_000,
    );
    const start = agent.records().find((r) => r.event === "start") as AgentRecord;
    const envelope = JSON.parse(
      (start.stdin as string).slice((start.stdin as string).indexOf("{")),
    ) as Envelope;
    expect(envelope).toMatchObject({
      text: "callback please",
      channel_id: `community_chat:channel:${general.id}`,
    });
    const unread = (tools.unread as { structuredContent: { messages: Envelope[] } }).structuredContent
      .messages;
    expect(unread.map((m) => m.id)).toEqual([envelope.id]);
    expect(tools.sent).toMatchObject({ structuredContent: { message_id: expect.stringMatching(/^msg_/) } });
    expect(tools.marked).toMatchObject({ structuredContent: { marked_count: 1 } });
    await waitFor(() => (fake.posted.length === 1 ? true : undefined), "the reply on Discord");
    expect(fake.posted[0]?.body.content).toBe("re: callback please");
    if (binary) expect(start.mcpConfig?.mcpServers.gw?.command).toMatch(/dist\/gw$/);

    const res = await fetch(`http://127.0.0.1:${servePort}/messages/unread`, {
      headers: { authorization: `Bearer ${serveEnv.GW_BEARER_TOKEN}`, "x-agent-id": "gw-receiver" },
    });
    expect(((await res.json()) as { messages: unknown[] }).messages).toEqual([]);

    receiver.proc.kill("SIGTERM");
    expect(await receiver.exited).toBe(0);
    expect(receiver.output().stderr).toContain("agent run done");
    expect(receiver.output().stderr).not.toContain(SECRET);
  },
  60_000,
);

test("gw receiver needs GW_WEBHOOK_SECRET and an agent program that exists (exit 2, naming them)", async () => {
  const dir = tempDir();
  const base = { HOME: dir, GW_BEARER_TOKEN: "t", GW_LOG_DIR: join(dir, "logs") };
  const noSecret = spawnGw(["receiver"], base);
  expect(await noSecret.exited).toBe(2);
  expect(noSecret.output().stderr).toContain("configuration error: GW_WEBHOOK_SECRET is not set");
  const noAgent = spawnGw(["receiver"], {
    ...base,
    GW_WEBHOOK_SECRET: "s",
    GW_RECEIVER_AGENT_BIN: "no-such-agent-xyz",
  });
  expect(await noAgent.exited).toBe(2);
  expect(noAgent.output().stderr).toContain('GW_RECEIVER_AGENT_BIN "no-such-agent-xyz" is not found on PATH');
  expect(noAgent.output().stderr).toContain("@anthropic-ai/claude-code");
});
