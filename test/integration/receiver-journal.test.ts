/**
 * What the receiver keeps (issue 19.5), in process with real agent processes (the fake agent) and a
 * real journal file: the 204 only once the journal row is committed (500 and nothing kept when the
 * journal cannot be written); a receiver stopped with running and queued jobs leaves them unfinished,
 * and a new receiver on the same journal runs each once more, in per-channel acceptance order, with
 * the interrupted note in the preamble, before anything new; jobs whose run ended (done, failed or
 * timed out) are not run again, and their ids are still seen after a restart; a job interrupted
 * MAX_RUNS times is given up; a channel with GW_RECEIVER_QUEUE_MAX jobs waiting answers 503
 * RECEIVER_BUSY with the error envelope and journals nothing.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { CHECK_CONTEXT } from "../../src/receiver/agent-command.ts";
import { MAX_RUNS } from "../../src/receiver/intake.ts";
import { waitFor } from "../helpers/process.ts";
import {
  type AgentRecord,
  envelopeOf,
  hangingAndQueued,
  RESTART_CHANNELS,
  receiverUnderTest,
} from "../helpers/receiver.ts";

const starts = (records: AgentRecord[]) => records.filter((r) => r.event === "start");
const ends = (records: AgentRecord[]) => records.filter((r) => r.event === "end");
const stdinOf = (r: AgentRecord) => r.stdin as string;
const textOf = (r: AgentRecord) => JSON.parse(stdinOf(r).slice(stdinOf(r).indexOf("{"))).text as string;
const preambleOf = (r: AgentRecord) => stdinOf(r).slice(0, stdinOf(r).indexOf("{"));
const channelOf = (r: AgentRecord) =>
  JSON.parse(stdinOf(r).slice(stdinOf(r).indexOf("{"))).channel_id as string;

const { A, B } = RESTART_CHANNELS;

describe("the 204 and the journal", () => {
  test("every 204 comes with its row already committed: another connection sees it", async () => {
    const r = receiverUnderTest();
    const reader = new Database(r.config.receiverDbPath, { readonly: true });
    const row = reader.query<{ channel_id: string; envelope: string | null }, [string]>(
      "SELECT channel_id, envelope FROM receiver_jobs WHERE delivery_id = ?1",
    );
    for (let i = 0; i < 5; i++) {
      const envelope = envelopeOf({ text: `n${i}` });
      const id = crypto.randomUUID();
      expect(row.get(id)).toBeNull();
      expect((await r.deliver(envelope, { deliveryId: id })).status).toBe(204);
      const got = row.get(id);
      expect(got?.channel_id).toBe(envelope.channel_id);
      // The envelope is kept until the run ends (then only the id stays).
      if (got?.envelope) expect(JSON.parse(got.envelope)).toEqual(envelope);
    }
    reader.close();
  });

  test("when the journal cannot be written (locked past the busy timeout) the answer is 500, nothing runs, and the retry is accepted", async () => {
    const r = receiverUnderTest();
    const locker = new Database(r.config.receiverDbPath);
    locker.run("BEGIN IMMEDIATE");
    const envelope = envelopeOf({ text: "while locked" });
    const refused = await r.deliver(envelope, { deliveryId: "locked-1" });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toMatchObject({ error: { code: "INTERNAL_ERROR", details: {} } });
    expect(r.journal.has("locked-1")).toBe(false);
    expect((await r.health()).workers).toBe(0);
    locker.run("ROLLBACK");
    locker.close();
    expect((await r.deliver(envelope, { deliveryId: "locked-1" })).status).toBe(204);
    await waitFor(() => (ends(r.agent.records()).length === 1 ? true : undefined), "the run");
    expect(starts(r.agent.records()).map(textOf)).toEqual(["while locked"]);
  }, 20_000);
});

describe("a restart on the same journal", () => {
  test("running and queued jobs of a stopped receiver run once more, in channel order, interrupted, before new ones", async () => {
    const first = receiverUnderTest({ killGraceMs: 100 });
    const { sent, ids } = hangingAndQueued();
    for (const [channel, text] of sent) {
      const id = ids.get(text) as string;
      expect(
        (await first.deliver(envelopeOf({ channel_id: channel, text }), { deliveryId: id })).status,
      ).toBe(204);
    }
    await waitFor(
      () => (first.agent.records().filter((x) => x.event === "grandchild").length === 2 ? true : undefined),
      "both hanging runs",
    );
    await first.stop(0);
    expect(ends(first.agent.records())).toHaveLength(0);
    const before = first.agent.records().length;

    const second = receiverUnderTest({ dir: first.dir, noStart: true });
    expect(second.journal.unfinished().map((j) => j.deliveryId)).toEqual(
      sent.map(([, t]) => ids.get(t) as string),
    );
    second.receiver.start();
    // A new delivery to channel A after the restart waits behind the recovered ones.
    expect((await second.deliver(envelopeOf({ channel_id: A, text: "a4 new" }))).status).toBe(204);
    const records = await waitFor(
      () => {
        const rs = first.agent.records().slice(before);
        return ends(rs).length === 6 ? rs : undefined;
      },
      "six runs after the restart",
      20_000,
    );
    const s = starts(records);
    expect(s.filter((x) => channelOf(x) === A).map(textOf)).toEqual(["hang-once a1", "a2", "a3", "a4 new"]);
    expect(s.filter((x) => channelOf(x) === B).map(textOf)).toEqual(["hang-once b1", "b2"]);
    for (const x of s) {
      const recovered = textOf(x) !== "a4 new";
      expect(preambleOf(x).includes(CHECK_CONTEXT)).toBe(recovered);
      expect(preambleOf(x)).toContain(`delivery ${ids.get(textOf(x)) ?? ""}`);
    }
    // The two that were running were interrupted mid-run; the three queued ones never started.
    const interruptedRun = (x: AgentRecord) => preambleOf(x).includes("An earlier run on this message");
    expect(s.filter(interruptedRun).map(textOf).sort()).toEqual(["hang-once a1", "hang-once b1"]);
    expect(
      s
        .filter((x) => preambleOf(x).includes("gw receiver was interrupted"))
        .map(textOf)
        .sort(),
    ).toEqual(["a2", "a3", "b2"]);
    await waitFor(
      () => (second.journal.counts().unfinished === 0 ? true : undefined),
      "the journal to settle",
    );
  }, 30_000);

  test("jobs whose run ended (done, failed, past its budget) are not run again, and their ids stay seen", async () => {
    const first = receiverUnderTest({ env: { GW_RECEIVER_AGENT_TIMEOUT_SECONDS: "0.5" } });
    const texts = ["ok", "exit=3", "sleep=5000"];
    const ids = texts.map(() => crypto.randomUUID());
    for (const [i, text] of texts.entries())
      await first.deliver(envelopeOf({ channel_id: `c${i}`, text }), { deliveryId: ids[i] });
    await waitFor(() => (first.journal.counts().unfinished === 0 ? true : undefined), "three runs to end");
    await first.stop(0);
    const before = first.agent.records().length;

    const second = receiverUnderTest({ dir: first.dir });
    for (const [i, text] of texts.entries())
      expect(
        (await second.deliver(envelopeOf({ channel_id: `c${i}`, text }), { deliveryId: ids[i] })).status,
      ).toBe(204);
    // A fresh delivery in channel c0 runs: had the redelivered "ok" been queued, it would have run first.
    await second.deliver(envelopeOf({ channel_id: "c0", text: "fresh" }));
    const records = await waitFor(() => {
      const rs = first.agent.records().slice(before);
      return ends(rs).length === 1 ? rs : undefined;
    }, "the fresh run");
    expect(starts(records).map(textOf)).toEqual(["fresh"]);
    expect(second.log.entries.filter((e) => e.msg === "delivery seen before; not run again")).toHaveLength(3);
  }, 20_000);

  test(`a job interrupted ${MAX_RUNS} times is given up at start, not run`, async () => {
    const first = receiverUnderTest({ noStart: true });
    first.journal.add({
      deliveryId: "poison",
      channelId: A,
      envelope: JSON.stringify(envelopeOf({ text: "poison" })),
      receivedAt: Date.now(),
    });
    first.journal.add({
      deliveryId: "fine",
      channelId: A,
      envelope: JSON.stringify(envelopeOf({ text: "fine" })),
      receivedAt: Date.now(),
    });
    for (let i = 0; i < MAX_RUNS; i++) first.journal.markStarted("poison");
    first.journal.markStarted("fine");
    first.receiver.start();
    await waitFor(() => (ends(first.agent.records()).length === 1 ? true : undefined), "the run");
    // The run's end is journaled once the receiver sees the agent exit, just after its last record.
    await waitFor(() => (first.journal.counts().unfinished === 0 ? true : undefined), "the run journaled");
    expect(starts(first.agent.records()).map(textOf)).toEqual(["fine"]);
    expect(first.journal.counts()).toEqual({ unfinished: 0, finished: 2 });
    expect(first.log.entries.some((e) => e.level === "error" && /given up/.test(e.msg))).toBe(true);
  });
});

describe("GW_RECEIVER_QUEUE_MAX", () => {
  test("beyond it a channel answers 503 RECEIVER_BUSY with the error envelope and keeps nothing; other channels go on", async () => {
    const r = receiverUnderTest({ env: { GW_RECEIVER_QUEUE_MAX: "2" } });
    const ok = async (text: string, channel = A, deliveryId?: string) =>
      (await r.deliver(envelopeOf({ channel_id: channel, text }), { deliveryId })).status;
    expect(await ok("sleep=1500 first")).toBe(204);
    await waitFor(async () => ((await r.health()).running === 1 ? true : undefined), "the first run");
    expect([await ok("q1"), await ok("q2")]).toEqual([204, 204]);
    const refusedId = crypto.randomUUID();
    const busy = await r.deliver(envelopeOf({ channel_id: A, text: "q3" }), { deliveryId: refusedId });
    expect(busy.status).toBe(503);
    expect(await busy.json()).toEqual({
      error: { code: "RECEIVER_BUSY", message: expect.any(String), details: { channel_id: A } },
    });
    expect(r.journal.has(refusedId)).toBe(false);
    expect(r.journal.counts().unfinished).toBe(3);
    expect(await ok("other channel", B)).toBe(204);
    // Once the queue has room, the same delivery (the sender's retry) is accepted and runs.
    await waitFor(async () => ((await r.health()).queued < 2 ? true : undefined), "room in the queue", 5_000);
    expect(await ok("q3", A, refusedId)).toBe(204);
    const done = await waitFor(
      () => (ends(r.agent.records()).length === 5 ? r.agent.records() : undefined),
      "five runs",
      15_000,
    );
    expect(
      starts(done)
        .filter((x) => channelOf(x) === A)
        .map(textOf),
    ).toEqual(["sleep=1500 first", "q1", "q2", "q3"]);
  }, 20_000);
});
