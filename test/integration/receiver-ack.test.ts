/**
 * GW_RECEIVER_ACK_EMOJI with real agent runs (the fake agent) and a recording stand-in for gw serve's API:
 * a Discord message gets the reaction when it is accepted and loses it when its run ends, however it ends
 * (done, past its budget, a failing agent); an iMessage message gets no call at all; a react call that
 * fails is tried again later and never holds a run back; across a restart on the same journal a reaction
 * is never left behind (a finished job's removal that never got through is done at start; a job cut short
 * keeps its reaction, put back at start, until its run ends). Without the setting nothing is called.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { type Recorded, recordingApi } from "../fakes/recording-api.ts";
import { waitFor } from "../helpers/process.ts";
import { type AgentRecord, envelopeOf, receiverUnderTest } from "../helpers/receiver.ts";

const EMOJI = "👀";
const api = recordingApi();
afterAll(() => api.stop());

const reacts = (messageId: string) =>
  api.requests
    .filter(
      (r) => r.path === "/messages/react" && (r.body as { message_id: string }).message_id === messageId,
    )
    .map((r) => r.body as { message_id: string; emoji: string; remove?: boolean });
const adds = (id: string) => reacts(id).filter((b) => !b.remove);
const removes = (id: string) => reacts(id).filter((b) => b.remove);
const ends = (rs: AgentRecord[]) => rs.filter((r) => r.event === "end");
const ok = (): { status: number; body: unknown } => ({ status: 200, body: {} });

function ackReceiver(o: { dir?: string; env?: Record<string, string>; noStart?: boolean } = {}) {
  return receiverUnderTest({
    ...o,
    env: { GW_BASE_URL: api.url, GW_RECEIVER_ACK_EMOJI: EMOJI, ...o.env },
  });
}

/** The calls for one message once its run is journaled as ended and its reaction as taken back. */
const settled = (r: ReturnType<typeof ackReceiver>, id: string, what: string, timeoutMs = 10_000) =>
  waitFor(
    () =>
      r.journal.counts().unfinished === 0 &&
      r.journal.standingReactions().length === 0 &&
      removes(id).length > 0
        ? reacts(id)
        : undefined,
    `${what}: the reaction taken back`,
    timeoutMs,
  );

describe("the reaction on a Discord message", () => {
  test.each([
    ["a run that ends", "hello", {}],
    ["a run past its time budget", "sleep=5000", { GW_RECEIVER_AGENT_TIMEOUT_SECONDS: "0.5" }],
    ["an agent that fails (exit 3)", "exit=3", {}],
  ] as const)("%s: added on acceptance, taken back when the run ends", async (what, text, env) => {
    api.answer(ok);
    const r = ackReceiver({ env });
    const m = envelopeOf({ text });
    expect((await r.deliver(m)).status).toBe(204);
    await waitFor(() => (adds(m.id).length > 0 ? true : undefined), `${what}: the reaction`);
    const calls = await settled(r, m.id, what);
    expect(calls).toEqual([
      { message_id: m.id, emoji: EMOJI },
      { message_id: m.id, emoji: EMOJI, remove: true },
    ]);
    const start = r.agent.records().find((x) => x.event === "start") as AgentRecord;
    expect(start).toBeDefined();
  });

  test("iMessage: no call at all, beside a Discord message that gets its reaction; without the setting, none", async () => {
    api.answer(ok);
    const before = api.requests.length;
    const r = ackReceiver();
    const imessage = envelopeOf({
      source: "device_messenger",
      channel_id: "+15555550100",
      channel_type: "dm",
    });
    const discord = envelopeOf({ channel_id: "community_chat:channel:1300000000000000005" });
    for (const m of [imessage, discord]) expect((await r.deliver(m)).status).toBe(204);
    await settled(r, discord.id, "the Discord message");
    const called = api.requests.slice(before).map((q) => (q.body as { message_id: string }).message_id);
    expect(called).toEqual([discord.id, discord.id]);

    const plain = receiverUnderTest({ env: { GW_BASE_URL: api.url } });
    const mark = api.requests.length;
    await plain.deliver(envelopeOf({ text: "plain" }));
    await waitFor(() => (plain.journal.counts().unfinished === 0 ? true : undefined), "the run journaled");
    expect(api.requests.slice(mark)).toEqual([]);
  });

  test("a react call that fails is logged and tried again later; the run never waits for it", async () => {
    const at: { t: number; remove: boolean }[] = [];
    const refusals = [
      { status: 503, body: { error: { code: "SERVICE_BUSY", message: "busy", details: {} } } },
      {
        status: 429,
        body: { error: { code: "RATE_LIMITED", message: "x", details: { retry_after_s: 0.1 } } },
      },
    ];
    api.answer((req: Recorded) => {
      if (req.path !== "/messages/react") return ok();
      at.push({ t: Date.now(), remove: (req.body as { remove?: boolean }).remove === true });
      return refusals.shift() ?? ok();
    });
    const r = ackReceiver();
    const m = envelopeOf({ text: "hello" });
    await r.deliver(m);
    const calls = await settled(r, m.id, "after a 503 and a 429");
    // The add was refused (503) and not tried again once the run had ended; the removal waited 1 s (the
    // first step of the backoff), was refused (429, retry_after_s 0.1) and went through 0.1 s later.
    expect(calls.map((c) => (c.remove ? "remove" : "add"))).toEqual(["add", "remove", "remove"]);
    const [first, second, third] = at.map((c) => c.t) as [number, number, number];
    expect(second - first).toBeGreaterThanOrEqual(900);
    expect(third - second).toBeGreaterThanOrEqual(90);
    expect(third - second).toBeLessThan(900);
    const start = r.agent.records().find((x) => x.event === "start") as AgentRecord;
    expect(start.t).toBeLessThan(second);
    expect(r.log.entries.filter((e) => e.msg.includes("trying again later"))).toHaveLength(2);
  });
});

describe("across a restart on the same journal", () => {
  test("a finished job whose removal never got through: taken back at the next start", async () => {
    api.answer((req) =>
      (req.body as { remove?: boolean }).remove
        ? { status: 502, body: { error: { code: "PLATFORM_SEND_FAILED", message: "x", details: {} } } }
        : ok(),
    );
    const first = ackReceiver();
    const m = envelopeOf({ text: "hello" });
    const deliveryId = crypto.randomUUID();
    await first.deliver(m, { deliveryId });
    await waitFor(() => (removes(m.id).length > 0 ? true : undefined), "a refused removal");
    expect(first.journal.standingReactions()).toEqual([{ deliveryId, messageId: m.id, reaction: EMOJI }]);
    await first.stop(0);

    api.answer(ok);
    const refusedRemovals = removes(m.id).length;
    const second = ackReceiver({ dir: first.dir });
    await waitFor(
      () => (removes(m.id).length > refusedRemovals ? true : undefined),
      "the removal at the next start",
      3_000,
    );
    await waitFor(() => (second.journal.standingReactions().length === 0 ? true : undefined), "forgotten");
    expect(adds(m.id)).toHaveLength(1);
  });

  test("a job cut short keeps its reaction: put back at start, taken back when its run ends", async () => {
    api.answer(ok);
    const first = ackReceiver();
    const m = envelopeOf({ text: "hang-once" });
    await first.deliver(m);
    await waitFor(() => first.agent.records().find((x) => x.event === "grandchild"), "the hanging run");
    await waitFor(() => (adds(m.id).length === 1 ? true : undefined), "the reaction");
    await first.stop(0);
    expect(removes(m.id)).toEqual([]);

    const second = ackReceiver({ dir: first.dir });
    const calls = await settled(second, m.id, "the run again");
    expect(calls.map((c) => (c.remove ? "remove" : "add"))).toEqual(["add", "add", "remove"]);
    expect(ends(second.agent.records())).toHaveLength(1);
  });
});
