/**
 * The search index stays in step with `messages` through each of the message store's writes (insert,
 * insertIfNew, setText, markDeleted), inside or outside a caller's transaction; visible messages only;
 * index rows are never reused; one ingest batch writes the index once (one FTS5 segment), not once per
 * message; and the search queries scan the index upwards (FTS5's fast direction) and look rows up by key.
 */
import { describe, expect, test } from "bun:test";
import { NEWEST_SQL, RANKED_SQL } from "../../src/store/search.ts";
import { FRIEND, inbound, messageRow, storeWithIngest } from "../helpers/messages.ts";

const row = messageRow;

function world() {
  const w = storeWithIngest();
  const { store } = w;
  const find = (q: string) =>
    store.search.search({ q, source: null, channelId: null, limit: 100 }).map((m) => m.id);
  const count = (sql: string) => (store.db.query(sql).get() as { n: number }).n;
  const indexed = () => count("SELECT count(*) AS n FROM message_search_rows");
  return { ...w, find, count, indexed };
}

describe("the index follows every write of the message store", () => {
  test("insert and insertIfNew index visible messages once, never quarantined or deleted ones", () => {
    const w = world();
    const allowed = row({ text: "alpha" });
    const outbound = row({ text: "alpha", direction: "outbound", allowlist_status: "outbound" });
    const stranger = row({ text: "alpha", allowlist_status: "unknown" });
    const tombstone = row({ text: "alpha", allowlist_status: "deleted" });
    w.store.messages.insert(allowed);
    expect(w.store.messages.insertIfNew(outbound)).toBe(true);
    expect(w.store.messages.insertIfNew({ ...outbound, id: row().id })).toBe(false);
    w.store.messages.insert(stranger);
    w.store.messages.insert(tombstone);
    expect(w.find("alpha").sort()).toEqual([allowed.id, outbound.id].sort());
    expect(w.indexed()).toBe(2);
  });

  test("setText re-indexes a visible message under the same row; a quarantined one stays out", () => {
    const w = world();
    const m = row({ text: "before" });
    const stranger = row({ text: "hidden", allowlist_status: "unknown" });
    w.store.messages.insert(m);
    w.store.messages.insert(stranger);
    const rowOf = () => w.count(`SELECT row AS n FROM message_search_rows WHERE message_id = '${m.id}'`);
    const first = rowOf();
    w.store.messages.setText(m.id, "after");
    w.store.messages.setText(stranger.id, "after too");
    expect(w.find("before")).toEqual([]);
    expect(w.find("after")).toEqual([m.id]);
    expect(rowOf()).toBe(first);
  });

  test("markDeleted leaves the index; the row is kept and never reused", () => {
    const w = world();
    const m = row({ text: "gone" });
    w.store.messages.insert(m);
    const last = w.count("SELECT max(row) AS n FROM message_search_rows");
    w.store.messages.markDeleted(m.id);
    expect(w.find("gone")).toEqual([]);
    w.store.messages.insert(row({ text: "gone again" }));
    expect(w.count("SELECT max(row) AS n FROM message_search_rows")).toBe(last + 1);
    expect(w.find("gone")).toHaveLength(1);
  });

  test("a failed write inside a caller's transaction leaves neither the message nor its index entry", () => {
    const w = world();
    const m = row({ text: "rolled back" });
    expect(() =>
      w.store.transaction(() => {
        w.store.messages.insert(m);
        throw new Error("abort");
      }),
    ).toThrow("abort");
    expect(w.store.messages.get(m.id)).toBeNull();
    expect(w.find("rolled")).toEqual([]);
    expect(w.indexed()).toBe(0);
  });

  test("in one transaction: stored then edited indexes the last text; a failed inner part is dropped", () => {
    const w = world();
    const kept = row({ text: "first" });
    const dropped = row({ text: "inner" });
    w.store.transaction(() => {
      w.store.messages.insert(kept);
      w.store.messages.setText(kept.id, "second");
      try {
        w.store.transaction(() => {
          w.store.messages.insert(dropped);
          throw new Error("inner");
        });
      } catch {}
    });
    expect(w.find("first")).toEqual([]);
    expect(w.find("second")).toEqual([kept.id]);
    expect(w.find("inner")).toEqual([]);
    expect(w.store.messages.get(dropped.id)).toBeNull();
  });

  test("one ingest batch writes the index once (one FTS5 segment), and the index checks out", () => {
    const w = world();
    w.store.db.run("INSERT INTO message_search (message_search, rank) VALUES ('automerge', 0)");
    const segments = () => w.count("SELECT count(DISTINCT segid) AS n FROM message_search_idx");
    const batch = Array.from({ length: 50 }, (_, i) =>
      inbound({ text: `batch word${i}`, sender: { id: FRIEND.id, displayName: "F" } }),
    );
    w.ingest({ source: "device_messenger", messages: batch, cursor: null });
    expect(segments()).toBe(1);
    expect(w.find("batch")).toHaveLength(50);
    w.store.db.run("INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 0)");
    expect(w.store.db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  });

  test("the search queries scan the index upwards and look up rows by key", () => {
    const w = world();
    for (const sql of [RANKED_SQL, NEWEST_SQL]) {
      const plan = (
        w.store.db.query(`EXPLAIN QUERY PLAN ${sql}`).all({
          match: "x",
          from: 0,
          window: 5,
          limit: 2,
          ...(sql === RANKED_SQL ? { rank: "x" } : {}),
        }) as {
          detail: string;
        }[]
      ).map((r) => r.detail);
      const scans = plan.filter((d) => d.includes("VIRTUAL TABLE"));
      expect(scans.length).toBeGreaterThan(0);
      for (const d of scans) expect(d).toMatch(/VIRTUAL TABLE INDEX 0:M/);
      expect(plan).toContain("SEARCH r USING INTEGER PRIMARY KEY (rowid=?)");
      expect(plan).toContain("SEARCH m USING PRIMARY KEY (id=?)");
    }
  });
});
