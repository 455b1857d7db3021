/**
 * Steering agent runs from the phone (extensions §7), end to end over real HTTP: a real `gw serve` logged in
 * to the fake Discord and reading a chat.db written as Messages writes it (answers sent through the
 * Messages stand-in) pushes signed webhooks to a real `gw receiver` running the fake agent, with
 * GW_RECEIVER_ACK_EMOJI, GW_RECEIVER_BATCH_MS and GW_RECEIVER_COMMANDS set. The reaction is added and
 * taken back on Discord in every end state (done, failed, /stop, past its budget, a kill -9 of the receiver
 * mid-run and its restart on the journal); iMessage gets none; a burst is one run; /stop, /status and /new
 * steer and answer in the chat; the same words from a group, over SMS or from a quarantined sender run.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { rowText } from "../../src/connectors/device-messenger/rows.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { FRESH_NOTE } from "../../src/receiver/agent-command.ts";
import { signedHeaders } from "../../src/webhooks/sign.ts";
import { chatDbIn, FRIEND, FRIEND_CHAT, GROUP_CHAT } from "../helpers/device.ts";
import { envelopeOf } from "../helpers/envelope.ts";
import type { AgentRecord } from "../helpers/fake-agent.ts";
import { isAlive, spawnGw, standInProgram, waitFor, waitForHealth } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";
import { chainReady, chainSetup, spawnChain, unreadOfReceiver } from "../helpers/webhook-chain.ts";

const SECRET = "phone-secret-0123456789abcdef";
const EMOJI = "👀";
const WINDOW_MS = 300;

const fake = await startFakeDiscord();
const ann = fake.user({ username: "ann_user", global_name: "Ann" });
const guild = fake.guild({ name: "Home" });
const general = fake.channel(guild.id, { name: "general" });
const burst = fake.channel(guild.id, { name: "burst" });
const annDm = fake.dm(ann);

const dir = tempDir();
const chat = chatDbIn(dir);
const entry = (source: string, id: string) =>
  `[[entry]]\nsource = "${source}"\nid = "${id}"\nperson_id = "ann"\ndisplay_name = "Ann"\n`;
const chain = chainSetup(fake, ann.id, SECRET, {
  dir,
  serveEnv: {
    GW_CHAT_DB_PATH: chat.path,
    GW_OSASCRIPT_PATH: standInProgram(dir),
    GW_STANDIN_CHAT_DB: chat.path,
    GW_DEVICE_POLL_INTERVAL_MS: "50",
    GW_WEBHOOK_RETRY_DELAYS_MS: "100,200,400,800",
    // Reactions take the channel's tokens like sends; the burst below needs more than the default 5.
    GW_RATE_LIMIT_PER_CHANNEL_RPS: "100",
    GW_RATE_LIMIT_BURST: "100",
  },
  // Ann's number is trusted over SMS too: her SMS reaches the receiver, yet is never a command.
  allowlist: `${entry("device_messenger", FRIEND)}services = ["iMessage", "SMS"]\n${entry("community_chat", ann.id)}`,
  receiverEnv: {
    GW_RECEIVER_DB_PATH: join(dir, "receiver/receiver.db"),
    GW_RECEIVER_ACK_EMOJI: EMOJI,
    GW_RECEIVER_BATCH_MS: String(WINDOW_MS),
    GW_RECEIVER_COMMANDS: "1",
  },
});
const { agent, receiverPort } = chain;

// Started at module scope, not in beforeAll (oven-sh/bun#38774, see phone-approval.test.ts).
const started = spawnChain(chain);
const serve = started.serve;
let receiver = started.receiver;
await chainReady(chain, { community_chat: "ok", device_messenger: "ok" });

afterAll(async () => {
  for (const p of [receiver, serve]) {
    p.proc.kill("SIGKILL");
    await p.exited;
  }
  await fake.stop();
  chat.writer.close();
});

const bodyAt = (r: AgentRecord) => (r.stdin as string).search(/^[[{]/m);
const envelopesOf = (r: AgentRecord): Envelope[] => {
  const body = JSON.parse((r.stdin as string).slice(bodyAt(r))) as Envelope | Envelope[];
  return Array.isArray(body) ? body : [body];
};
/** The runs whose first message has this text, once `n` of them have started. */
const runsOf = (text: string, n = 1) =>
  waitFor(() => {
    const rs = agent.records().filter((r) => r.event === "start" && envelopesOf(r)[0]?.text === text);
    return rs.length >= n ? rs : undefined;
  }, `a run of "${text}"`);
/** Ann writes on Discord: the message's id and text. */
const say = (channelId: string, content: string) => ({
  id: String(fake.message(channelId, { author: ann, content }).id),
  content,
});
/** The grandchild record of the run of `text`. */
const childOf = async (text: string) => {
  const [run] = await runsOf(text);
  return waitFor(
    () => agent.records().find((r) => r.event === "grandchild" && r.pid === (run as AgentRecord).pid),
    `the child of "${text}"`,
  );
};
const reactions = (messageId: string) =>
  fake.reactionCalls.filter((c) => c.messageId === messageId).map((c) => [c.emoji, c.add ? "add" : "remove"]);
const takenBack = (messageId: string, what: string, timeoutMs = 10_000) =>
  waitFor(
    () => (reactions(messageId).at(-1)?.[1] === "remove" ? reactions(messageId) : undefined),
    `${what}: the reaction taken back`,
    timeoutMs,
  );
const ADDED_THEN_REMOVED = [
  [EMOJI, "add"],
  [EMOJI, "remove"],
];
/** What the Messages stand-in sent into an iMessage chat. */
const sentTo = (chatGuid: string) =>
  chat.writer.db
    .query<{ guid: string; text: string | null; body: Uint8Array | null }, []>(
      `SELECT c.guid, m.text, m.attributedBody AS body FROM message m
       JOIN chat_message_join j ON j.message_id = m.ROWID JOIN chat c ON c.ROWID = j.chat_id
       WHERE m.is_from_me = 1 ORDER BY m.ROWID`,
    )
    .all()
    .filter((r) => r.guid === chatGuid)
    .map((r) => rowText(r) ?? "");

test("Discord: the reaction stands while a run waits and runs, and is taken back when it ends (done, failed)", async () => {
  const done = say(general.id, "hello");
  await takenBack(done.id, "a run that ends");
  const failed = say(general.id, "exit=3");
  await takenBack(failed.id, "a failing agent");
  for (const m of [done, failed]) expect(reactions(m.id)).toEqual(ADDED_THEN_REMOVED);
  expect((await runsOf("exit=3"))[0]?.ppid).toBe(receiver.proc.pid);
}, 20_000);

test("iMessage: runs, no reaction is ever tried (beside a Discord message that gets one)", async () => {
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "imessage hello" });
  const twin = say(general.id, "discord twin");
  expect(await takenBack(twin.id, "the Discord twin")).toEqual(ADDED_THEN_REMOVED);
  await runsOf("imessage hello");
  // A react call would have gone out at acceptance, before the batch window and the run, and its 422
  // (iMessage cannot react) would be logged: the run's end line comes after it.
  await waitFor(
    () =>
      receiver
        .output()
        .stderr.split("\n")
        .find((l) => l.includes('"msg":"agent run done"') && l.includes(`"channel_id":"${FRIEND}"`)),
    "the run's end",
  );
  expect(receiver.output().stderr).not.toContain("acknowledgement reaction");
}, 20_000);

test("a burst of five is one run with the five envelopes in order; a message after the window, its own run", async () => {
  const texts = ["b1", "b2", "b3", "b4", "b5"];
  const sent = texts.map((content) => say(burst.id, content));
  const [run] = await runsOf("b1");
  expect(envelopesOf(run as AgentRecord).map((e) => e.text)).toEqual(texts);
  expect((run as AgentRecord).stdin).toStartWith("5 messages arrived through gw together");
  for (const m of sent) await takenBack(m.id, m.content);
  const late = say(burst.id, "b6");
  const [own] = await runsOf("b6");
  expect(envelopesOf(own as AgentRecord).map((e) => e.text)).toEqual(["b6"]);
  await takenBack(late.id, "b6");
}, 20_000);

test("/stop in Ann's DM: the agent and its child gone within 2 s, the queue dropped, answered; the next message runs", async () => {
  const running = say(annDm.id, "sleep=30000 grandchild");
  const child = await childOf("sleep=30000 grandchild");
  const queued = say(annDm.id, "queued");
  await waitFor(
    () => (reactions(queued.id).length === 1 ? true : undefined),
    "the queued message's reaction",
  );
  const stoppedAt = Date.now();
  say(annDm.id, "/stop");
  await waitFor(
    () => (!isAlive(child.pid) && !isAlive(child.child as number) ? true : undefined),
    "the agent and its child gone",
    2_000,
  );
  expect(Date.now() - stoppedAt).toBeLessThan(2_000);
  const answer = await waitFor(
    () =>
      fake.posted.find((p) => p.channelId === annDm.id && String(p.body.content).startsWith("gw: stopped")),
    "the /stop answer",
  );
  expect(answer.body.content).toMatch(
    /^gw: stopped the run of 1 message that had been going for \d+ s; dropped 1 message waiting\.$/,
  );
  for (const m of [running, queued]) expect(await takenBack(m.id, m.content)).toEqual(ADDED_THEN_REMOVED);
  say(annDm.id, "after stop");
  await runsOf("after stop");
  const texts = agent
    .records()
    .flatMap((r) => (r.event === "start" ? envelopesOf(r).map((e) => e.text) : []));
  expect(texts).not.toContain("queued");
  expect(texts).not.toContain("/stop");
  // The stopped, dropped and command messages are read for the receiver's agent id: no later run
  // picks them up from list_unread_messages (the fake agent marks nothing read itself).
  const unread = (
    await unreadOfReceiver<Envelope>(chain, `limit=100&channel_id=community_chat:dm:${annDm.id}`)
  ).map((m) => m.text);
  expect(unread).toEqual(["after stop"]);
}, 20_000);

test("/status and /new over iMessage: answered in the chat; the next run starts afresh", async () => {
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "sleep=800 working" });
  await runsOf("sleep=800 working");
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "/Status" });
  const status = await waitFor(
    () => sentTo(FRIEND_CHAT).find((t) => t.startsWith("gw: a run")),
    "the /status answer in Messages",
  );
  expect(status).toMatch(/^gw: a run of 1 message is going since \d+ s ago; nothing waits\.$/);
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "/new" });
  await waitFor(
    () => sentTo(FRIEND_CHAT).find((t) => t === "gw: the next run starts a new conversation."),
    "the /new answer in Messages",
  );
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "fresh start" });
  const [fresh] = await runsOf("fresh start");
  expect((fresh as AgentRecord).stdin).toContain(FRESH_NOTE);
}, 20_000);

test("the same words from a group, over SMS, or from a quarantined sender are ordinary messages: runs", async () => {
  const posts = fake.posted.length;
  say(general.id, "/stop");
  chat.writer.message({ chatGuid: GROUP_CHAT, from: FRIEND, text: "/status" });
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, service: "SMS", text: "/new" });
  // A quarantined sender's message never reaches the receiver through gw serve; signed straight to it.
  const stranger = envelopeOf({
    channel_id: "community_chat:dm:1400000000000000077",
    channel_type: "dm",
    sender: { id: "1100000000000000077", display_name: "Eve", person_id: null },
    text: "/stop",
  });
  const body = JSON.stringify(stranger);
  const res = await fetch(`http://127.0.0.1:${receiverPort}/webhook`, {
    method: "POST",
    headers: { ...signedHeaders(SECRET, crypto.randomUUID(), Math.floor(Date.now() / 1000), body) },
    body,
  });
  expect(res.status).toBe(204);
  const runs = await waitFor(() => {
    const rs = agent
      .records()
      .filter(
        (r) => r.event === "start" && ["/stop", "/status", "/new"].includes(envelopesOf(r)[0]?.text ?? ""),
      );
    return rs.length === 4 ? rs : undefined;
  }, "four ordinary runs");
  // The control: /status from Ann in her DM is answered, not run.
  say(annDm.id, "/status");
  await waitFor(
    () => fake.posted.slice(posts).find((p) => String(p.body.content).startsWith("gw: nothing is running")),
    "the /status answer in Ann's DM",
  );
  const dmStatusRuns = agent
    .records()
    .filter(
      (r) =>
        r.event === "start" && envelopesOf(r).some((e) => e.text === "/status" && e.channel_type === "dm"),
    );
  expect(dmStatusRuns).toEqual([]);
  expect(runs.map((r) => envelopesOf(r)[0]?.channel_id).sort()).toEqual(
    [`community_chat:channel:${general.id}`, GROUP_CHAT, FRIEND, stranger.channel_id].sort(),
  );
}, 20_000);

test("kill -9 mid-run: the reaction stays; the next gw receiver puts it back, runs the job again, takes it back; past the budget too", async () => {
  const hanging = say(general.id, "hang-once");
  await childOf("hang-once");
  await waitFor(() => (reactions(hanging.id).length === 1 ? true : undefined), "its reaction");
  receiver.proc.kill("SIGKILL");
  await receiver.exited;
  expect(reactions(hanging.id)).toEqual([[EMOJI, "add"]]);

  receiver = spawnGw(["receiver"], { ...chain.receiverEnv, GW_RECEIVER_AGENT_TIMEOUT_SECONDS: "1" });
  await waitForHealth(receiverPort);
  expect(await takenBack(hanging.id, "the run again")).toEqual([
    [EMOJI, "add"],
    [EMOJI, "add"],
    [EMOJI, "remove"],
  ]);
  const runs = await runsOf("hang-once", 2);
  expect((runs[1] as AgentRecord).stdin).toContain("interrupted");

  const slow = say(general.id, "sleep=30000 over budget");
  expect(await takenBack(slow.id, "a run past its budget", 5_000)).toEqual(ADDED_THEN_REMOVED);
  expect(receiver.output().stderr).toContain("passed its time budget");
}, 20_000);
