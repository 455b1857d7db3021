/**
 * The receiver journal's phone-control parts (src/store/receiver-journal.ts, migration 2) on real SQLite
 * files: a journal written by the gw before it opens with its jobs intact; a batch is started and finished
 * in one go under its first delivery id; a command is journaled finished together with the jobs a /stop
 * drops (or, when its id is known, nothing changes); a job's acknowledgement is recorded, listed once the
 * job has finished, and keeps the row from pruning until it is taken back.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openReceiverJournal } from "../../src/store/receiver-journal.ts";
import { tempDir } from "../helpers/temp.ts";

const job = (id: string, o: { reaction?: string } = {}) => ({
  deliveryId: id,
  channelId: "c1",
  envelope: JSON.stringify({ id: `msg_${id}` }),
  receivedAt: 1_000,
  messageId: `msg_${id}`,
  ...o,
});

test("a journal of the previous schema opens with its jobs intact, and takes the new columns", () => {
  const path = join(tempDir(), "receiver.db");
  const old = new Database(path, { create: true });
  old.exec(`
    CREATE TABLE receiver_jobs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, delivery_id TEXT NOT NULL UNIQUE, channel_id TEXT NOT NULL,
      envelope TEXT, received_at INTEGER NOT NULL, runs INTEGER NOT NULL DEFAULT 0, finished_at INTEGER,
      outcome TEXT, CHECK ((finished_at IS NULL) = (envelope IS NOT NULL)));
    CREATE INDEX receiver_jobs_unfinished ON receiver_jobs (seq) WHERE finished_at IS NULL;
    CREATE INDEX receiver_jobs_finished ON receiver_jobs (finished_at, seq) WHERE finished_at IS NOT NULL;
    INSERT INTO receiver_jobs (delivery_id, channel_id, envelope, received_at, runs) VALUES ('old', 'c1', '{}', 5, 1);
    INSERT INTO receiver_jobs (delivery_id, channel_id, envelope, received_at, finished_at, outcome)
      VALUES ('done', 'c1', NULL, 4, 6, 'done');
    PRAGMA user_version = 1;
  `);
  old.close();
  const journal = openReceiverJournal(path);
  expect(journal.unfinished()).toEqual([
    { deliveryId: "old", channelId: "c1", envelope: "{}", receivedAt: 5, runs: 1 },
  ]);
  expect(journal.has("done")).toBe(true);
  journal.setReaction("old", "👀", "msg_old");
  expect(journal.unfinished()[0]).toMatchObject({ reaction: "👀", messageId: "msg_old" });
  journal.close();
});

describe("jobs of phone control", () => {
  test("a batch is started and finished together, named by its first delivery id", () => {
    const journal = openReceiverJournal(join(tempDir(), "receiver.db"));
    for (const id of ["a", "b", "c"]) journal.add(job(id));
    journal.markAllStarted(["a", "b"], "a");
    expect(journal.unfinished().map((j) => [j.deliveryId, j.runs, j.batch])).toEqual([
      ["a", 1, "a"],
      ["b", 1, "a"],
      ["c", 0, undefined],
    ]);
    journal.markAllFinished(["a", "b"], 9, "done");
    expect(journal.unfinished().map((j) => j.deliveryId)).toEqual(["c"]);
    expect(journal.counts()).toEqual({ unfinished: 1, finished: 2 });
    journal.close();
  });

  test("a command is journaled finished with the jobs it drops; a known id changes nothing", () => {
    const path = join(tempDir(), "receiver.db");
    const journal = openReceiverJournal(path);
    for (const id of ["q1", "q2", "keep"]) journal.add(job(id));
    const command = {
      deliveryId: "stop-1",
      channelId: "c1",
      messageId: "msg_stop",
      at: 50,
      outcome: "command-stop",
    };
    expect(journal.addCommand(command, { deliveryIds: ["q1", "q2"], outcome: "dropped-by-stop" })).toBe(true);
    expect(journal.addCommand(command, { deliveryIds: ["keep"], outcome: "dropped-by-stop" })).toBe(false);
    expect(journal.unfinished().map((j) => j.deliveryId)).toEqual(["keep"]);
    expect(journal.has("stop-1")).toBe(true);
    const db = new Database(path, { readonly: true });
    expect(
      db.query("SELECT delivery_id, finished_at, outcome, runs FROM receiver_jobs ORDER BY seq").all(),
    ).toEqual([
      { delivery_id: "q1", finished_at: 50, outcome: "dropped-by-stop", runs: 0 },
      { delivery_id: "q2", finished_at: 50, outcome: "dropped-by-stop", runs: 0 },
      { delivery_id: "keep", finished_at: null, outcome: null, runs: 0 },
      { delivery_id: "stop-1", finished_at: 50, outcome: "command-stop", runs: 0 },
    ]);
    db.close();
    journal.close();
  });

  test("a reaction is listed once its job has finished, and its row outlives pruning until taken back", () => {
    const journal = openReceiverJournal(join(tempDir(), "receiver.db"));
    journal.add(job("r", { reaction: "👀" }));
    journal.add(job("plain"));
    expect(journal.unfinished()[0]).toMatchObject({ deliveryId: "r", reaction: "👀", messageId: "msg_r" });
    expect(journal.standingReactions()).toEqual([]);
    journal.markFinished("r", 10, "done");
    journal.markFinished("plain", 10, "done");
    expect(journal.standingReactions()).toEqual([{ deliveryId: "r", messageId: "msg_r", reaction: "👀" }]);
    expect(journal.prune({ before: 1_000, keep: 0 })).toBe(1);
    expect([journal.has("r"), journal.has("plain")]).toEqual([true, false]);
    journal.setReaction("r", null);
    expect(journal.standingReactions()).toEqual([]);
    expect(journal.prune({ before: 1_000, keep: 0 })).toBe(1);
    expect(journal.has("r")).toBe(false);
    journal.close();
  });
});
