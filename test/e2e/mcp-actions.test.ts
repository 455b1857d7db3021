/**
 * react, edit_message, list_channels and search_messages of `gw mcp --extended`, through the official MCP
 * client, against a real gw service over HTTP whose real Discord connector (discord.js) is logged in to the
 * fake Discord: each tool's answer is the route's, and the platform saw the reaction and the edit.
 */
import { afterEach, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import { type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { closeAll, connectMcp, type McpHandle } from "../helpers/mcp-client.ts";
import { freePort, waitFor } from "../helpers/process.ts";
import { AGENT, TOKEN } from "../helpers/service.ts";

const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await closeAll();
  for (const stop of stops.splice(0).reverse()) await stop();
});

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Ann wrote "hello bot" in Home #general; gw serve on a port, and `gw mcp --extended` talking to it. */
async function discordWorld(): Promise<{ fake: FakeDiscord; hello: Envelope; mcp: McpHandle }> {
  const fake = await startFakeDiscord();
  stops.push(() => fake.stop());
  const ann = fake.user({ username: "ann_user", global_name: "Ann" });
  const general = fake.channel(fake.guild({ name: "Home" }).id, { name: "general" });
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
  const port = freePort();
  gw.svc.app.listen({ hostname: "127.0.0.1", port, reusePort: false });
  stops.push(async () => void (await gw.svc.app.stop(true)));
  fake.message(general.id, { author: ann, content: "hello bot" });
  const hello = await waitFor(async () => {
    const res = await gw.request("GET", "/messages/unread", { headers: AGENT });
    return ((await res.json()) as { messages: Envelope[] }).messages[0];
  }, "Ann's message");
  const mcp = await connectMcp(["--extended"], {
    GW_BEARER_TOKEN: TOKEN,
    GW_AGENT_ID: "mcp-agent",
    GW_BASE_URL: `http://127.0.0.1:${port}`,
  });
  return { fake, hello, mcp };
}

test("react adds and removes the bot's reaction on Discord", async () => {
  const { fake, hello, mcp } = await discordWorld();
  const added = await mcp.call("react", { message_id: hello.id, emoji: "👍" });
  expect(added.isError).toBeFalsy();
  expect(added.structuredContent).toEqual({ message_id: hello.id, emoji: "👍", removed: false });
  const removed = await mcp.call("react", { message_id: hello.id, emoji: "👍", remove: true });
  expect(removed.structuredContent).toEqual({ message_id: hello.id, emoji: "👍", removed: true });
  expect(fake.reactionCalls.map((c) => [c.emoji, c.add])).toEqual([
    ["👍", true],
    ["👍", false],
  ]);
});

test("edit_message changes the text of a message gw sent", async () => {
  const { fake, hello, mcp } = await discordWorld();
  const sent = await mcp.call("send_message", { channel_id: hello.channel_id, text: "on my way" });
  const id = sent.structuredContent?.message_id as string;
  const edited = await mcp.call("edit_message", { message_id: id, text: "on my way, 5 min" });
  expect(edited.isError).toBeFalsy();
  expect(edited.structuredContent?.message_id).toBe(id);
  expect(edited.structuredContent?.edited_at).toMatch(TIMESTAMP);
  expect(fake.edits.map((e) => e.content)).toEqual(["on my way, 5 min"]);
  const other = await mcp.call("edit_message", { message_id: hello.id, text: "not mine" });
  expect(other.isError).toBe(true);
  expect(other.data).toMatchObject({
    error: { code: "VALIDATION_FAILED", details: { rule: "own_messages_only" } },
  });
});

test("list_channels lists the conversation with its name and this agent's unread count", async () => {
  const { hello, mcp } = await discordWorld();
  const r = await mcp.call("list_channels", { source: "community_chat" });
  expect(r.isError).toBeFalsy();
  const channels = r.structuredContent?.channels as Record<string, unknown>[];
  expect(channels).toHaveLength(1);
  expect(channels[0]).toMatchObject({
    channel_id: hello.channel_id,
    source: "community_chat",
    channel_type: "group",
    name: "Home #general",
    unread_count: 1,
  });
  expect(channels[0]?.last_message_at).toMatch(TIMESTAMP);
});

test("search_messages finds messages by their words, an edited one by its new words only", async () => {
  const { hello, mcp } = await discordWorld();
  const ids = (r: { structuredContent?: Record<string, unknown> }) =>
    ((r.structuredContent?.messages ?? []) as Envelope[]).map((m) => m.id);
  const found = await mcp.call("search_messages", { q: "HELLO", channel_id: hello.channel_id });
  expect(found.isError).toBeFalsy();
  expect(ids(found)).toEqual([hello.id]);
  const sent = await mcp.call("send_message", { channel_id: hello.channel_id, text: "on my way" });
  const id = sent.structuredContent?.message_id as string;
  expect(ids(await mcp.call("search_messages", { q: "way" }))).toEqual([id]);
  await mcp.call("edit_message", { message_id: id, text: "running late" });
  expect(ids(await mcp.call("search_messages", { q: "late" }))).toEqual([id]);
  expect(ids(await mcp.call("search_messages", { q: "way" }))).toEqual([]);
  expect(ids(await mcp.call("search_messages", { q: '"OR" *' }))).toEqual([]);
});
