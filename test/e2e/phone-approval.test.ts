/**
 * Permission prompts answered from the phone (extensions.md §3), end to end: the official MCP client plays
 * Claude Code against `gw mcp --channel` with GW_MCP_OWNER, a real `gw serve` reads a chat.db written as
 * Messages writes it (sends through the Messages stand-in) and logs in to the fake Discord. A prompt reaches
 * each of the owner's one-to-one chats once and never a group; the owner's `yes`/`no` there is the verdict,
 * marked read and never pushed; every other message that looks like an answer is an ordinary message.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { rowText } from "../../src/connectors/device-messenger/rows.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { FAKE_BOT_TOKEN, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { CHANNEL_CAPABILITY } from "../../src/mcp/channel.ts";
import {
  PERMISSION_CAPABILITY,
  PERMISSION_METHOD,
  PERMISSION_REQUEST_METHOD,
} from "../../src/mcp/permission.ts";
import {
  chatDbServeEnv,
  FRIEND,
  FRIEND_CHAT,
  GROUP_CHAT,
  STRANGER,
  STRANGER_CHAT,
} from "../helpers/device.ts";
import { closeAll, connectMcp, type McpHandle } from "../helpers/mcp-client.ts";
import { type GwProcess, spawnGw, waitFor, waitForConnectors } from "../helpers/process.ts";

const fake = await startFakeDiscord();
const ann = fake.user({ username: "ann_user", global_name: "Ann" });
const sam = fake.user({ username: "sam_user", global_name: "Sam" });
const guild = fake.guild({ name: "Home" });
const general = fake.channel(guild.id, { name: "general" });
const annDm = fake.dm(ann);
const samDm = fake.dm(sam);

const {
  chat,
  port,
  env: serveEnv,
} = chatDbServeEnv(
  {
    GW_DEVICE_POLL_INTERVAL_MS: "50",
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
  },
  { standIn: true },
);
const entry = (source: string, id: string, person: string) =>
  `[[entry]]\nsource = "${source}"\nid = "${id}"\nperson_id = "${person}"\ndisplay_name = "${person}"\n`;
writeFileSync(
  serveEnv.GW_ALLOWLIST_PATH as string,
  [
    // Ann's number is trusted over SMS too: her SMS reaches agents, yet is never a verdict.
    `${entry("device_messenger", FRIEND, "ann")}services = ["iMessage", "SMS"]\n`,
    entry("community_chat", ann.id, "ann"),
    entry("community_chat", sam.id, "sam"),
  ].join(""),
);
const base = `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${serveEnv.GW_BEARER_TOKEN}` };

let serve: GwProcess;
async function startServe(): Promise<void> {
  serve = spawnGw(["serve"], serveEnv);
  await waitForConnectors(port, { community_chat: "ok", device_messenger: "ok" }, "both connectors ok");
}

const get = async (path: string, agent = "claude-code") =>
  (await fetch(`${base}${path}`, { headers: { ...auth, "x-agent-id": agent } })).json();

type Verdict = { request_id: string; behavior: string };
function capture(h: McpHandle): Verdict[] {
  const verdicts: Verdict[] = [];
  const pushAlso = h.client.fallbackNotificationHandler;
  h.client.fallbackNotificationHandler = async (n) => {
    if (n.method === PERMISSION_METHOD) verdicts.push(n.params as Verdict);
    else await pushAlso?.(n);
  };
  return verdicts;
}

const mcpEnv = (extra: Record<string, string> = {}) => ({
  GW_BEARER_TOKEN: serveEnv.GW_BEARER_TOKEN as string,
  GW_BASE_URL: base,
  GW_AGENT_ID: "claude-code",
  ...extra,
});

// Started at module scope, not in beforeAll: bun test 1.4 may kill every process a file's hooks and tests
// spawned when a stale timeout fires (oven-sh/bun#38774), which took gw serve and the owner's gw mcp
// down mid-file under load; processes started here are not tracked.
await startServe();
// The owner's one-to-one chats, seen by gw before gw mcp starts: a Discord DM and an iMessage chat.
fake.message(annDm.id, { author: ann, content: "hi bot" });
chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hi from the phone" });
await waitFor(async () => {
  const { channels } = (await get("/channels?person_id=ann")) as { channels: unknown[] };
  return channels.length === 2 ? channels : undefined;
}, "Ann's two one-to-one channels");
const owner: McpHandle = await connectMcp(["--channel"], mcpEnv({ GW_MCP_OWNER: "ann" }));
const verdicts: Verdict[] = capture(owner);

afterAll(async () => {
  await closeAll();
  serve.proc.kill("SIGKILL");
  await fake.stop();
  chat.writer.close();
});

const ask = (requestId: string, preview = "bun test") =>
  owner.client.notification({
    method: PERMISSION_REQUEST_METHOD,
    params: {
      request_id: requestId,
      tool_name: "Bash",
      description: "Run the tests",
      input_preview: preview,
    },
  });

/** The prompt as posted: on Discord per channel, and as written into chat.db by the stand-in per chat. */
function prompts(requestId: string) {
  const discord = fake.posted.filter((p) => String(p.body.content).includes(`yes ${requestId}`));
  const imessage = chat.writer.db
    .query<{ guid: string; text: string | null; body: Uint8Array | null }, []>(
      `SELECT c.guid, m.text, m.attributedBody AS body FROM message m
       JOIN chat_message_join j ON j.message_id = m.ROWID JOIN chat c ON c.ROWID = j.chat_id
       WHERE m.is_from_me = 1`,
    )
    .all()
    .filter((r) => rowText(r)?.includes(`yes ${requestId}`))
    .map((r) => r.guid);
  return { discord: discord.map((p) => p.channelId).sort(), imessage: imessage.sort() };
}

const prompted = (requestId: string) =>
  waitFor(
    () => {
      const p = prompts(requestId);
      return p.discord.length >= 1 && p.imessage.length >= 1 ? p : undefined;
    },
    `the prompt for ${requestId} on both platforms`,
    20_000,
  );

const verdictFor = (requestId: string) =>
  // Generous: after a restart of gw serve the stream waits out its backoff first.
  waitFor(() => verdicts.find((v) => v.request_id === requestId), `the verdict for ${requestId}`, 20_000);

const pushedText = (text: string) =>
  waitFor(() => owner.pushed.find((p) => p.content === text), `"${text}" pushed as a message`);

describe("capability", () => {
  test("declared with an owner who has a one-to-one chat; not without GW_MCP_OWNER or without such a chat", async () => {
    expect(owner.client.getServerCapabilities()?.experimental).toEqual({
      [CHANNEL_CAPABILITY]: {},
      [PERMISSION_CAPABILITY]: {},
    });
    for (const extra of [{}, { GW_MCP_OWNER: "nobody" }] as Record<string, string>[]) {
      const other = await connectMcp(["--channel"], mcpEnv(extra));
      expect(other.client.getServerCapabilities()?.experimental).toEqual({ [CHANNEL_CAPABILITY]: {} });
      // Closed at once: another channel of the same agent id would take the owner's answers off the
      // shared stream (whichever follower reads a message first marks it read), so verdicts went missing.
      await other.client.close();
    }
  });
});

describe("a permission request", () => {
  test("reaches each of the owner's one-to-one chats once; the owner's yes on Discord allows, marked read, ✅", async () => {
    await ask("abcde", `rm -rf build ${"x".repeat(600)}`);
    const p = await prompted("abcde");
    expect(p).toEqual({ discord: [annDm.id], imessage: [FRIEND_CHAT] });
    const text = String(fake.posted.find((x) => x.channelId === annDm.id)?.body.content);
    expect(text).toStartWith("Claude wants to use Bash: Run the tests\nrm -rf build xxx");
    expect(text).toContain(`${"x".repeat(400 - "rm -rf build ".length)}…\nReply "yes abcde" or "no abcde".`);
    const answer = fake.message(annDm.id, { author: ann, content: "yes abcde" });
    expect(await verdictFor("abcde")).toEqual({ request_id: "abcde", behavior: "allow" });
    await waitFor(
      () => fake.reactionCalls.find((r) => r.messageId === answer.id && r.emoji === "✅"),
      "the ✅ on the answer",
    );
    const unread = (await get("/messages/unread?limit=100")) as { messages: Envelope[] };
    expect(unread.messages.map((m) => m.text)).not.toContain("yes abcde");
    // A later message is pushed; the answer never was. The prompts went out once each.
    fake.message(annDm.id, { author: ann, content: "thanks" });
    await pushedText("thanks");
    expect(owner.pushed.map((x) => x.content)).not.toContain("yes abcde");
    expect(prompts("abcde")).toEqual(p);
  });

  test("the owner's no on iMessage denies", async () => {
    await ask("fghij");
    await prompted("fghij");
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "No FGHIJ" });
    expect(await verdictFor("fghij")).toEqual({ request_id: "fghij", behavior: "deny" });
  });

  test("ordinary messages: another person, a stranger, a group, an unknown id, a second answer", async () => {
    await ask("kmnop");
    await prompted("kmnop");
    fake.message(samDm.id, { author: sam, content: "yes kmnop" });
    await pushedText("yes kmnop");
    chat.writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text: "yes kmnop" });
    chat.writer.message({ chatGuid: GROUP_CHAT, from: FRIEND, text: "y kmnop" });
    await pushedText("y kmnop");
    fake.message(general.id, { author: ann, content: "yes  kmnop " });
    await pushedText("yes  kmnop ");
    fake.message(annDm.id, { author: ann, content: "yes zzzzz" });
    await pushedText("yes zzzzz");
    expect(verdicts.find((v) => v.request_id === "kmnop")).toBeUndefined();
    fake.message(annDm.id, { author: ann, content: "yes kmnop" });
    expect(await verdictFor("kmnop")).toEqual({ request_id: "kmnop", behavior: "allow" });
    fake.message(annDm.id, { author: ann, content: "no kmnop" });
    await pushedText("no kmnop");
    expect(verdicts.filter((v) => v.request_id === "kmnop")).toHaveLength(1);
  });

  test("the owner's number over SMS, even with her entry trusting SMS, is no verdict but an ordinary message", async () => {
    await ask("wxyza");
    await prompted("wxyza");
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, service: "SMS", text: "yes wxyza" });
    await pushedText("yes wxyza");
    expect(verdicts.find((v) => v.request_id === "wxyza")).toBeUndefined();
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, service: "iMessage", text: "yes wxyza" });
    expect(await verdictFor("wxyza")).toEqual({ request_id: "wxyza", behavior: "allow" });
  });

  test("an answer after GW_MCP_APPROVAL_EXPIRY_S is an ordinary message", async () => {
    // Another session (its own agent id, so its own stream) whose prompts wait 1 s.
    const short = await connectMcp(
      ["--channel"],
      mcpEnv({ GW_MCP_OWNER: "ann", GW_MCP_APPROVAL_EXPIRY_S: "1", GW_AGENT_ID: "short-session" }),
    );
    const shortVerdicts = capture(short);
    await short.client.notification({
      method: PERMISSION_REQUEST_METHOD,
      params: { request_id: "qqqqq", tool_name: "Bash", description: "Run the tests", input_preview: "" },
    });
    await prompted("qqqqq");
    // The expiry is a span of time: nothing to wait for but the clock.
    await Bun.sleep(1_100);
    fake.message(annDm.id, { author: ann, content: "yes qqqqq" });
    await waitFor(() => short.pushed.find((p) => p.content === "yes qqqqq"), "the late answer pushed");
    expect(shortVerdicts).toEqual([]);
  });

  test("gw serve restarted while a request is pending: the answer after the restart still counts", async () => {
    await ask("rstuv");
    await prompted("rstuv");
    serve.proc.kill("SIGTERM");
    expect(await serve.exited).toBe(0);
    await startServe();
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "yes rstuv" });
    expect(await verdictFor("rstuv")).toEqual({ request_id: "rstuv", behavior: "allow" });
  }, 30_000);
});
