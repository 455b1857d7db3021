/**
 * The receiver's journal (src/store/receiver-journal.ts) on real SQLite files: created 0600 in a 0700
 * folder before SQLite opens it (its -wal and -shm too), WAL; a row is committed when `add` returns
 * (another connection sees it); one row per delivery id; unfinished jobs in acceptance order across
 * channels, with their run counts; a finished job keeps only its id; pruning by age and by count
 * touches finished jobs only; everything survives a reopen; a newer schema is refused.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { StoreVersionError } from "../../src/store/open.ts";
import { openReceiverJournal } from "../../src/store/receiver-journal.ts";
import { tempDir } from "../helpers/temp.ts";

const modeOf = (path: string) => statSync(path).mode & 0o777;
const job = (id: string, channelId = "c1", receivedAt = 1_000) => ({
  deliveryId: id,
  channelId,
  envelope: JSON.stringify({ id: `msg_${id}`, channel_id: channelId }),
  receivedAt,
});
/** A journal in a new file holding two jobs, d1 then d2 (channel c1); its path. */
const twoJobsInNewFile = () => {
  const path = join(tempDir(), "receiver.db");
  const journal = openReceiverJournal(path);
  journal.add(job("d1"));
  journal.add(job("d2"));
  return { path, journal };
};

describe("the file", () => {
  test("is created 0600 (with -wal and -shm) in a new 0700 folder, in WAL mode", () => {
    const path = join(tempDir(), "new/dir/receiver.db");
    const process022 = process.umask(0o022);
    try {
      const journal = openReceiverJournal(path);
      journal.add(job("d1"));
      expect(modeOf(join(path, ".."))).toBe(0o700);
      for (const f of [path, `${path}-wal`, `${path}-shm`]) {
        expect(existsSync(f)).toBe(true);
        expect(modeOf(f)).toBe(0o600);
      }
      const other = new Database(path, { readonly: true });
      expect(other.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
      other.close();
      journal.close();
    } finally {
      process.umask(process022);
    }
  });

  test("a row is committed when add returns: another connection sees it at once", () => {
    const path = join(tempDir(), "receiver.db");
    const journal = openReceiverJournal(path);
    const other = new Database(path, { readonly: true });
    const row = other.query("SELECT delivery_id, channel_id, runs, finished_at FROM receiver_jobs");
    expect(row.all()).toEqual([]);
    expect(journal.add(job("d1"))).toBe(true);
    expect(row.all()).toEqual([{ delivery_id: "d1", channel_id: "c1", runs: 0, finished_at: null }]);
    other.close();
    journal.close();
  });

  test("a journal from a newer gw is refused", () => {
    const path = join(tempDir(), "receiver.db");
    openReceiverJournal(path).close();
    const db = new Database(path);
    db.run("PRAGMA user_version = 99");
    db.close();
    expect(() => openReceiverJournal(path)).toThrow(StoreVersionError);
    expect(() => openReceiverJournal(path)).toThrow(/the receiver journal has schema version 99/);
  });
});

describe("jobs", () => {
  test("one row per delivery id; unfinished jobs in acceptance order across channels, with their runs", () => {
    const journal = openReceiverJournal(join(tempDir(), "receiver.db"));
    expect(journal.add(job("d1", "a"))).toBe(true);
    expect(journal.add(job("d2", "b"))).toBe(true);
    expect(journal.add(job("d3", "a"))).toBe(true);
    expect(journal.add(job("d1", "b", 5))).toBe(false);
    expect(journal.has("d1")).toBe(true);
    expect(journal.has("d9")).toBe(false);
    journal.markStarted("d1");
    journal.markStarted("d1");
    expect(journal.unfinished()).toEqual([
      { ...job("d1", "a"), runs: 2 },
      { ...job("d2", "b"), runs: 0 },
      { ...job("d3", "a"), runs: 0 },
    ]);
    expect(journal.counts()).toEqual({ unfinished: 3, finished: 0 });
    journal.close();
  });

  test("a finished job leaves the unfinished list, keeps only its id (and outcome), and is not started again", () => {
    const { path, journal } = twoJobsInNewFile();
    journal.markStarted("d1");
    journal.markFinished("d1", 2_000, "failed");
    journal.markFinished("d1", 3_000, "done");
    journal.markStarted("d1");
    expect(journal.unfinished().map((j) => j.deliveryId)).toEqual(["d2"]);
    expect(journal.has("d1")).toBe(true);
    expect(journal.counts()).toEqual({ unfinished: 1, finished: 1 });
    const other = new Database(path, { readonly: true });
    expect(
      other
        .query("SELECT envelope, runs, finished_at, outcome FROM receiver_jobs WHERE delivery_id = 'd1'")
        .get(),
    ).toEqual({ envelope: null, runs: 1, finished_at: 2_000, outcome: "failed" });
    other.close();
    journal.close();
  });

  test("everything survives a reopen, and acceptance order goes on after pruning", () => {
    const { path, journal: first } = twoJobsInNewFile();
    first.markStarted("d2");
    first.markFinished("d1", 10, "done");
    first.close();
    const again = openReceiverJournal(path);
    expect(again.has("d1")).toBe(true);
    expect(again.unfinished()).toEqual([{ ...job("d2"), runs: 1 }]);
    again.prune({ before: 11, keep: 100 });
    again.add(job("d3"));
    again.add(job("d0"));
    expect(again.unfinished().map((j) => j.deliveryId)).toEqual(["d2", "d3", "d0"]);
    again.close();
  });
});

describe("pruning", () => {
  test("finished jobs that ended before the cut go; unfinished jobs stay whatever their age", () => {
    const journal = openReceiverJournal(join(tempDir(), "receiver.db"));
    for (const id of ["old", "new", "waiting"]) journal.add(job(id, "c1", 0));
    journal.markFinished("old", 100, "done");
    journal.markFinished("new", 200, "done");
    expect(journal.prune({ before: 200, keep: 100 })).toBe(1);
    expect(["old", "new", "waiting"].map((id) => journal.has(id))).toEqual([false, true, true]);
    expect(journal.prune({ before: 10_000, keep: 100 })).toBe(1);
    expect(journal.unfinished().map((j) => j.deliveryId)).toEqual(["waiting"]);
    journal.close();
  });

  test("beyond `keep` finished jobs, the ones that ended first go", () => {
    const journal = openReceiverJournal(join(tempDir(), "receiver.db"));
    for (let i = 0; i < 10; i++) journal.add(job(`d${i}`));
    journal.add(job("waiting"));
    // Ended in reverse order of acceptance: d9 first.
    for (let i = 0; i < 10; i++) journal.markFinished(`d${i}`, 1_000 - i, "done");
    expect(journal.prune({ before: 0, keep: 3 })).toBe(7);
    expect(journal.counts()).toEqual({ unfinished: 1, finished: 3 });
    expect(["d0", "d1", "d2", "d3", "d9"].map((id) => journal.has(id))).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
    expect(journal.has("waiting")).toBe(true);
    journal.close();
  });
});
