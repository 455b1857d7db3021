/**
 * The channel list stays in step with `messages` through the message store's writes, inside or outside a
 * caller's transaction: inside one, its counts are written once per channel when the work returns (the
 * newest visible time, the allowed count, the one-to-one person), a failed inner part leaves nothing,
 * and a message stored and deleted in the same transaction is counted out. The list always equals a
 * count made from the rows.
 */
import { expect, test } from "bun:test";
import type { MessageRow } from "../../src/store/messages.ts";
import type { Store } from "../../src/store/store.ts";
import { messageRow, storeWithIngest } from "../helpers/messages.ts";

/** A row in a one-to-one channel of an allowlisted person, unless `over` says otherwise. */
const row = (over: Partial<MessageRow> = {}): MessageRow =>
  messageRow({ channel_id: "dm-1", person_id: "person-a", ...over });

type Listed = {
  channel_id: string;
  person_id: string | null;
  last_visible_at: number | null;
  allowed_count: number;
};

const listed = (store: Store) =>
  store.db
    .query(
      "SELECT channel_id, person_id, last_visible_at, allowed_count FROM channel_list ORDER BY channel_id",
    )
    .all() as Listed[];

/** The list as migration 5 counts it from the rows. */
const counted = (store: Store) =>
  store.db
    .query(
      `SELECT channel_id, max(CASE WHEN channel_type = 'dm' AND direction = 'inbound' THEN person_id END) AS person_id,
         max(message_ts) AS last_visible_at, sum(allowlist_status = 'allowed') AS allowed_count
       FROM messages WHERE allowlist_status IN ('allowed', 'outbound') GROUP BY channel_id ORDER BY channel_id`,
    )
    .all() as Listed[];

test("in one transaction: each channel's count written once, a failed inner part dropped", () => {
  const { store } = storeWithIngest();
  store.db.run("CREATE TEMP TABLE writes (channel_id TEXT)");
  store.db.run(
    "CREATE TEMP TRIGGER count_writes AFTER UPDATE ON channel_list BEGIN INSERT INTO writes VALUES (new.channel_id); END",
  );
  store.messages.insert(row({ channel_id: "dm-1" }));
  store.transaction(() => {
    for (let i = 0; i < 5; i++) store.messages.insert(row({ channel_id: "dm-1" }));
    store.messages.insert(row({ channel_id: "group-1", channel_type: "group", person_id: null }));
    store.messages.insert(row({ channel_id: "dm-1", direction: "outbound", allowlist_status: "outbound" }));
    store.messages.insert(row({ channel_id: "dm-2", allowlist_status: "unknown" }));
    try {
      store.transaction(() => {
        store.messages.insert(row({ channel_id: "dm-3" }));
        store.messages.insert(row({ channel_id: "dm-1", message_ts: 10_000 }));
        throw new Error("inner");
      });
    } catch {}
  });
  const updated = store.db.query("SELECT channel_id FROM writes").all();
  expect(updated).toEqual([{ channel_id: "dm-1" }]);
  expect(listed(store)).toEqual([
    { channel_id: "dm-1", person_id: "person-a", last_visible_at: 8, allowed_count: 6 },
    { channel_id: "group-1", person_id: null, last_visible_at: 7, allowed_count: 1 },
  ]);
  expect(listed(store)).toEqual(counted(store));
});

test("a message stored and deleted in the same transaction is counted out, its channel's time found again", () => {
  const { store } = storeWithIngest();
  const first = row({ channel_id: "dm-9" });
  const last = row({ channel_id: "dm-9" });
  const alone = row({ channel_id: "dm-8" });
  store.transaction(() => {
    store.messages.insert(first);
    store.messages.insert(last);
    store.messages.insert(alone);
    store.messages.markDeleted(last.id);
    store.messages.markDeleted(alone.id);
  });
  const expected: Listed[] = [
    {
      channel_id: "dm-8",
      person_id: "person-a",
      last_visible_at: null,
      allowed_count: 0,
    },
    { channel_id: "dm-9", person_id: "person-a", last_visible_at: first.message_ts, allowed_count: 1 },
  ];
  expect(listed(store)).toEqual(expected);
  expect(store.channelList.page({ agentId: "a", source: null, limit: 10 }).map((c) => c.channel_id)).toEqual([
    "dm-9",
  ]);
});

test("outside a transaction each write counts at once; a failed caller's transaction leaves no count", () => {
  const { store } = storeWithIngest();
  store.messages.insert(row({ channel_id: "dm-5", message_ts: 50 }));
  expect(listed(store)).toEqual([
    { channel_id: "dm-5", person_id: "person-a", last_visible_at: 50, allowed_count: 1 },
  ]);
  expect(() =>
    store.transaction(() => {
      store.messages.insert(row({ channel_id: "dm-5", message_ts: 60 }));
      throw new Error("abort");
    }),
  ).toThrow("abort");
  expect(listed(store)).toEqual(counted(store));
  expect(listed(store)[0]?.last_visible_at).toBe(50);
});
