/**
 * The whole loop as users run it, from source and as the compiled binary: a Discord message reaches
 * `gw serve` (fake Discord), is pushed as a signed webhook to `gw receiver`, which runs the agent (the
 * fake agent); the agent calls back through `gw mcp` (started from the receiver's own program, with the
 * private MCP config): lists unread, replies, marks read — and the reply reaches Discord. Also the
 * receiver's configuration errors and a clean stop on SIGTERM.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { killAfterEach } from "../helpers/gw-processes.ts";
import { ensureBinary, spawnGw, waitFor } from "../helpers/process.ts";
import type { AgentRecord } from "../helpers/receiver.ts";
import { tempDir } from "../helpers/temp.ts";
import { chainReady, chainSetup, spawnChain, unreadOfReceiver } from "../helpers/webhook-chain.ts";

const SECRET = "chain-secret-0123456789abcdef";
// Killed before the fakes stop (afterEach hooks run in the order they were registered).
const procs = killAfterEach();
const discords = fakeDiscords();

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();

test.each([false, true])(
  "gw serve → signed webhook → gw receiver → agent → gw mcp → Discord (compiled: %p)",
  async (binary) => {
    const { fake, ann, general } = await discords.home();
    const chain = chainSetup(fake, ann.id, SECRET);
    const { agent } = chain;
    const { serve, receiver } = spawnChain(chain, { binary });
    procs.push(serve, receiver);
    await chainReady(chain);

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

    expect(await unreadOfReceiver(chain)).toEqual([]);

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
