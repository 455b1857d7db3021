/**
 * GW_RECEIVER_BATCH_MS with real agent runs (the fake agent), over a real journal: a burst within the
 * window of its first message is one run whose stdin is a JSON array of the envelopes in order, with a
 * preamble naming the count; a message after the window has its own run; messages that arrive while a
 * run runs wait, and those within the window of the oldest waiting one are the next run; the journal
 * starts and finishes a batch together, and a batch cut short by a stop runs again whole, once. Other
 * channels are not held back.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import { waitFor } from "../helpers/process.ts";
import { type AgentRecord, envelopeOf, receiverUnderTest } from "../helpers/receiver.ts";

const WINDOW_MS = 300;
const A = "community_chat:channel:1300000000000000001";
const B = "community_chat:channel:1300000000000000002";

const starts = (rs: AgentRecord[]) => rs.filter((r) => r.event === "start");
const bodyAt = (r: AgentRecord) => (r.stdin as string).search(/^[[{]/m);
const envelopesOf = (r: AgentRecord) => JSON.parse((r.stdin as string).slice(bodyAt(r))) as Envelope[];
const textsOf = (r: AgentRecord) => envelopesOf(r).map((e) => e.text);
const preambleOf = (r: AgentRecord) => (r.stdin as string).slice(0, bodyAt(r));

const batchReceiver = (o: { dir?: string; env?: Record<string, string> } = {}) =>
  receiverUnderTest({ ...o, env: { GW_RECEIVER_BATCH_MS: String(WINDOW_MS), ...o.env } });

const settled = (r: ReturnType<typeof batchReceiver>, runs: number, what: string) =>
  waitFor(() => {
    const s = starts(r.agent.records());
    return s.length === runs && r.journal.counts().unfinished === 0 ? s : undefined;
  }, what);

describe("a burst", () => {
  test("five messages within the window: one run with the five envelopes in order; one after it: its own run", async () => {
    const r = batchReceiver();
    const burst = ["one", "two", "three", "four", "five"].map((text) => envelopeOf({ channel_id: A, text }));
    const ids = burst.map(() => crypto.randomUUID());
    const sentAt = Date.now();
    for (const [i, m] of burst.entries())
      expect((await r.deliver(m, { deliveryId: ids[i] })).status).toBe(204);
    const [run] = await settled(r, 1, "the burst's run");
    expect(envelopesOf(run as AgentRecord)).toEqual(burst);
    expect(preambleOf(run as AgentRecord)).toStartWith(
      `5 messages arrived through gw together (deliveries ${ids.join(", ")}).`,
    );
    // It waited for the window of the first.
    expect((run as AgentRecord).t - sentAt).toBeGreaterThanOrEqual(WINDOW_MS - 20);

    const late = envelopeOf({ channel_id: A, text: "six" });
    await r.deliver(late);
    const runs = await settled(r, 2, "the late message's run");
    expect(envelopesOf(runs[1] as AgentRecord)).toEqual([late]);
    expect(preambleOf(runs[1] as AgentRecord)).toStartWith("1 message arrived through gw (delivery ");
  });

  test("messages that arrive while a run runs wait; those within the window of the oldest are the next run", async () => {
    const r = batchReceiver();
    await r.deliver(envelopeOf({ channel_id: A, text: "sleep=900 long" }));
    await waitFor(() => (starts(r.agent.records()).length === 1 ? true : undefined), "the long run");
    for (const text of ["w1", "w2"]) await r.deliver(envelopeOf({ channel_id: A, text }));
    // A gap longer than the window, still while the long run runs: the gap is the point, not an event.
    await Bun.sleep(WINDOW_MS + 100);
    await r.deliver(envelopeOf({ channel_id: A, text: "w3" }));
    // Another channel is not held back by A's run.
    await r.deliver(envelopeOf({ channel_id: B, text: "b1" }));
    const runs = await settled(r, 4, "four runs");
    const inA = runs.filter((x) => envelopesOf(x)[0]?.channel_id === A);
    expect(inA.map(textsOf)).toEqual([["sleep=900 long"], ["w1", "w2"], ["w3"]]);
    const inB = runs.find((x) => envelopesOf(x)[0]?.channel_id === B) as AgentRecord;
    expect(inB.t).toBeLessThan((inA[1] as AgentRecord).t);
  });
});

describe("the journal", () => {
  test("a batch is started and finished together; one cut short by a stop runs again whole, once", async () => {
    const first = batchReceiver();
    const texts = ["hang-once x", "y", "z"];
    const ids = texts.map(() => crypto.randomUUID());
    for (const [i, text] of texts.entries())
      await first.deliver(envelopeOf({ channel_id: A, text }), { deliveryId: ids[i] });
    await waitFor(() => first.agent.records().find((x) => x.event === "grandchild"), "the batch running");
    const unfinished = first.journal.unfinished();
    expect(unfinished.map((j) => [j.deliveryId, j.runs, j.batch])).toEqual(ids.map((id) => [id, 1, ids[0]]));
    await first.stop(0);
    const before = first.agent.records().length;

    const second = batchReceiver({ dir: first.dir });
    const after = await waitFor(() => {
      const s = starts(first.agent.records().slice(before));
      return s.length >= 1 && second.journal.counts().unfinished === 0 ? s : undefined;
    }, "the batch again");
    expect(after.map(textsOf)).toEqual([texts]);
    expect(preambleOf(after[0] as AgentRecord)).toContain("An earlier run on these messages was interrupted");
    // Finished together: one time, one outcome, two runs each, and the batch named by its first delivery.
    await second.stop(0);
    const db = new Database(second.config.receiverDbPath, { readonly: true });
    const rows = db
      .query("SELECT delivery_id, runs, finished_at, outcome, batch FROM receiver_jobs ORDER BY seq")
      .all() as { delivery_id: string; runs: number; finished_at: number; outcome: string; batch: string }[];
    db.close();
    expect(rows.map((x) => [x.delivery_id, x.runs, x.outcome, x.batch])).toEqual(
      ids.map((id) => [id, 2, "done", ids[0] as string]),
    );
    expect(new Set(rows.map((x) => x.finished_at)).size).toBe(1);
  });
});
