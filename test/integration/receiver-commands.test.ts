/**
 * GW_RECEIVER_COMMANDS with real agent runs (the fake agent) and a recording stand-in for gw serve's API:
 * `/stop` ends the channel's run (the agent and its child gone within 2 s), drops its queue (journaled as
 * dropped, their reactions taken back) and the next message runs; `/status` says what runs and waits;
 * `/new` marks the next run's preamble, once. Each is marked read for the receiver's agent id, answered in
 * its channel under a key derived from its delivery id, journaled as seen and never run; a redelivery
 * changes and answers nothing. From a group, over SMS, from a quarantined sender, or with the setting off,
 * the same words are ordinary messages (a run).
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import { FRESH_NOTE } from "../../src/receiver/agent-command.ts";
import { answerKey } from "../../src/receiver/commands.ts";
import { recordingApi } from "../fakes/recording-api.ts";
import { isAlive, waitFor } from "../helpers/process.ts";
import { type AgentRecord, envelopeOf, receiverUnderTest } from "../helpers/receiver.ts";

const DM = "community_chat:dm:1400000000000000001";
const api = recordingApi((r) => ({
  status: 200,
  body: r.path === "/messages/send" ? { message_id: "msg_x" } : {},
}));
afterAll(() => api.stop());

const dm = (text: string, over: Partial<Envelope> = {}) =>
  envelopeOf({ channel_id: DM, channel_type: "dm", text, ...over });
const starts = (rs: AgentRecord[]) => rs.filter((r) => r.event === "start");
const textsOf = (r: AgentRecord) => {
  const stdin = r.stdin as string;
  const body = JSON.parse(stdin.slice(stdin.search(/^[[{]/m))) as Envelope | Envelope[];
  return (Array.isArray(body) ? body : [body]).map((e) => e.text).join(" | ");
};
/** The posts to the channel since request number `from`. */
const sends = (channelId: string, from: number) =>
  api.requests
    .slice(from)
    .filter(
      (r) => r.path === "/messages/send" && (r.body as { channel_id: string }).channel_id === channelId,
    );
const answerTo = (deliveryId: string) =>
  waitFor(
    () =>
      api.requests.find(
        (r) => r.path === "/messages/send" && r.headers["idempotency-key"] === answerKey(deliveryId),
      ),
    "the command's answer",
  );
/** Delivers `text` in Ann's DM under a fresh delivery id; resolves with the answer posted for it. */
const commandAnswer = async (r: ReturnType<typeof commandReceiver>, text: string) => {
  const id = crypto.randomUUID();
  await r.deliver(dm(text), { deliveryId: id });
  return answerTo(id);
};

function commandReceiver(env: Record<string, string> = {}) {
  return receiverUnderTest({
    killGraceMs: 5_000,
    env: { GW_BASE_URL: api.url, GW_RECEIVER_COMMANDS: "1", GW_RECEIVER_ACK_EMOJI: "👀", ...env },
  });
}

describe("/stop", () => {
  test("ends the run (agent and child gone within 2 s), drops the queue, answers; the next message runs", async () => {
    const r = commandReceiver();
    const running = dm("sleep=30000 grandchild");
    await r.deliver(running);
    const child = await waitFor(() => r.agent.records().find((x) => x.event === "grandchild"), "the run");
    const queued = [dm("q1"), dm("q2")];
    const queuedIds = queued.map(() => crypto.randomUUID());
    for (const [i, m] of queued.entries()) await r.deliver(m, { deliveryId: queuedIds[i] });

    const stop = dm("/stop");
    const stopId = crypto.randomUUID();
    const stoppedAt = Date.now();
    expect((await r.deliver(stop, { deliveryId: stopId })).status).toBe(204);
    await waitFor(
      () => (!isAlive(child.pid) && !isAlive(child.child as number) ? true : undefined),
      "the agent and its child gone",
      2_000,
    );
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    const answer = await answerTo(stopId);
    expect(answer.body).toEqual({
      channel_id: DM,
      text: expect.stringMatching(
        /^gw: stopped the run of 1 message that had been going for \d+ s; dropped 2 messages waiting\.$/,
      ),
    });
    expect(api.requests).toContainEqual(
      expect.objectContaining({
        path: "/messages/mark_read",
        body: { message_ids: [stop.id, running.id, ...queued.map((m) => m.id)] },
        headers: expect.objectContaining({ "x-agent-id": "gw-receiver" }),
      }),
    );
    // Dropped jobs are finished as dropped, the run as stopped; the command is seen, never run.
    const db = new Database(r.config.receiverDbPath, { readonly: true });
    const outcome = db.query<{ outcome: string }, [string]>(
      "SELECT outcome FROM receiver_jobs WHERE delivery_id = ?1",
    );
    expect(queuedIds.map((id) => outcome.get(id)?.outcome)).toEqual(["dropped-by-stop", "dropped-by-stop"]);
    expect(outcome.get(stopId)?.outcome).toBe("command-stop");
    await waitFor(() => (r.journal.counts().unfinished === 0 ? true : undefined), "the run journaled");
    db.close();
    // The reactions of the stopped run and of the dropped messages are all taken back.
    await waitFor(() => (r.journal.standingReactions().length === 0 ? true : undefined), "reactions gone");
    for (const m of [running, ...queued])
      expect(
        api.requests
          .filter(
            (x) => x.path === "/messages/react" && (x.body as { message_id: string }).message_id === m.id,
          )
          .map((x) => (x.body as { remove?: boolean }).remove === true),
      ).toEqual([false, true]);

    await r.deliver(dm("after"));
    await waitFor(() => (starts(r.agent.records()).length === 2 ? true : undefined), "the next run");
    expect(starts(r.agent.records()).map(textsOf)).toEqual(["sleep=30000 grandchild", "after"]);
    // A redelivery of the /stop changes and answers nothing.
    expect((await r.deliver(stop, { deliveryId: stopId })).status).toBe(204);
    expect(api.requests.filter((x) => x.headers["idempotency-key"] === answerKey(stopId))).toHaveLength(1);
  });

  test("with nothing running or waiting it says so", async () => {
    const r = commandReceiver();
    expect((await commandAnswer(r, " /STOP ")).body).toEqual({
      channel_id: DM,
      text: "gw: nothing was running; nothing was waiting.",
    });
    expect(starts(r.agent.records())).toEqual([]);
  });
});

describe("/status and /new", () => {
  test("/status says what runs, since when, and how many wait", async () => {
    const r = commandReceiver({ GW_RECEIVER_AGENT_TIMEOUT_SECONDS: "3" });
    await r.deliver(dm("sleep=800"));
    await waitFor(() => (starts(r.agent.records()).length === 1 ? true : undefined), "the run");
    await r.deliver(dm("waiting"));
    expect((await commandAnswer(r, "/status")).body).toEqual({
      channel_id: DM,
      text: expect.stringMatching(/^gw: a run of 1 message is going since [01] s ago; 1 message waits\.$/),
    });
    await waitFor(() => (starts(r.agent.records()).length === 2 ? true : undefined), "the waiting run");
    expect(starts(r.agent.records()).map(textsOf)).toEqual(["sleep=800", "waiting"]);
  });

  test("/new: the next run's preamble says the conversation starts afresh; the one after does not", async () => {
    const mark = api.requests.length;
    const r = commandReceiver();
    expect((await commandAnswer(r, "/new")).body).toEqual({
      channel_id: DM,
      text: "gw: the next run starts a new conversation.",
    });
    await r.deliver(dm("first"));
    await waitFor(() => (starts(r.agent.records()).length === 1 ? true : undefined), "the first run");
    await r.deliver(dm("second"));
    const runs = await waitFor(() => {
      const s = starts(r.agent.records());
      return s.length === 2 ? s : undefined;
    }, "the second run");
    expect(runs.map((x) => (x.stdin as string).includes(FRESH_NOTE))).toEqual([true, false]);
    expect(sends(DM, mark)).toHaveLength(1);
  });
});

describe("ordinary messages", () => {
  const cases: [string, Partial<Envelope>, Record<string, string>][] = [
    ["in a group", { channel_id: "community_chat:channel:1300000000000000009", channel_type: "group" }, {}],
    [
      "over SMS from an allowlisted number",
      { source: "device_messenger", channel_id: "+15555550100", raw: { service: "SMS" } },
      {},
    ],
    [
      "from a quarantined sender",
      {
        channel_id: "community_chat:dm:1400000000000000002",
        sender: { id: "1", display_name: "X", person_id: null },
      },
      {},
    ],
    [
      "with GW_RECEIVER_COMMANDS off",
      { channel_id: "community_chat:dm:1400000000000000003" },
      { GW_RECEIVER_COMMANDS: "0" },
    ],
  ];
  test(`/stop, /status and /new ${cases.map(([what]) => what).join(", ")}: runs, the run going on not stopped (from Ann over iMessage: commands)`, async () => {
    const mark = api.requests.length;
    const ordinary = async ([what, over, env]: (typeof cases)[number]) => {
      const r = commandReceiver(env);
      await r.deliver(dm("sleep=300 busy", over));
      await waitFor(
        () => (starts(r.agent.records()).length === 1 ? true : undefined),
        `${what}: the first run`,
      );
      for (const text of ["/stop", "/status", "/new"]) await r.deliver(dm(text, over));
      const runs = await waitFor(() => {
        const s = starts(r.agent.records());
        return s.length === 4 && r.journal.counts().unfinished === 0 ? s : undefined;
      }, `${what}: four runs`);
      expect([what, ...runs.map(textsOf)]).toEqual([what, "sleep=300 busy", "/stop", "/status", "/new"]);
      expect([what, r.agent.records().filter((x) => x.event === "end").length]).toEqual([what, 4]);
      expect([what, sends(over.channel_id as string, mark)]).toEqual([what, []]);
    };
    // The control: the same words from Ann over iMessage itself are commands (the first stops the run).
    const control = async () => {
      const over = {
        source: "device_messenger",
        channel_id: "+15555550101",
        raw: { service: "iMessage" },
      } as const;
      const r = commandReceiver();
      await r.deliver(dm("sleep=30000 busy", over));
      await waitFor(() => (starts(r.agent.records()).length === 1 ? true : undefined), "control: the run");
      for (const text of ["/stop", "/status", "/new"]) await r.deliver(dm(text, over));
      await waitFor(
        () => (sends(over.channel_id, mark).length === 3 ? true : undefined),
        "control: 3 answers",
      );
      expect(starts(r.agent.records()).map(textsOf)).toEqual(["sleep=30000 busy"]);
    };
    // Side by side: each case has its own receiver, journal and channel.
    await Promise.all([...cases.map(ordinary), control()]);
  });
});
