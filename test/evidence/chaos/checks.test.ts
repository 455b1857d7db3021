/**
 * The chaos oracle itself (checks.ts): a consistent snapshot passes every invariant, and each kind of
 * damage the kill loop hunts for (a row lost behind the cursor, a duplicate row, a missing delivery row, a
 * key sent twice, a 200 without its record, a pending delivery at the end, a loose file mode, a canary in
 * a log; an edit, unsend or reaction lost, stored twice or invented, a stale text, a missing tombstone)
 * fails the invariant that names it — so a green chaos run means something. The consistent snapshot the
 * cases damage is snapshot-fixture.ts.
 */
import { expect, test } from "bun:test";
import { afterKill, final } from "./checks.ts";
import type { Snapshot } from "./snapshot.ts";
import { base, change, type Damage, failed, failedAfter } from "./snapshot-fixture.ts";

test("a consistent snapshot holds every invariant", () => {
  expect(failed(afterKill(base()))).toEqual([]);
  expect(failed(final(base()))).toEqual([]);
});

test("a change a kill caught, or on a quarantined message, may be stored once or not at all", () => {
  const s = base();
  s.events.push(
    {
      id: "e4",
      kind: "message.edited",
      source: "community_chat",
      platform_id: "300",
      sender_id: "ann",
      data: JSON.stringify({ text: "chaos 3 [doom] ~edit1", previous_text: "chaos 3 [doom]" }),
      dedupe_key: "discord:edit:300:t",
    },
    {
      id: "e5",
      kind: "reaction.added",
      source: "device_messenger",
      platform_id: "G2",
      sender_id: "+15555550199",
      data: JSON.stringify({ emoji: "❤️" }),
      dedupe_key: "imessage:tapback:T5",
    },
  );
  (s.messages[2] as { text: string }).text = "chaos 3 [doom] ~edit1";
  expect(failed(final(s))).toEqual([]);
  const stale = structuredClone(s);
  (stale.messages[2] as { text: string }).text = "chaos 3 [doom]";
  expect(failed(afterKill(stale))).toEqual([
    "edited messages carry their latest text, deleted ones are tombstones",
  ]);
});

test.each<[string, Damage, string, "afterKill" | "final"]>([
  [
    "corruption",
    (s) => {
      s.integrity = "*** in database main ***";
    },
    "integrity_check ok, foreign_key_check empty",
    "afterKill",
  ],
  [
    "a row lost behind the cursor",
    (s) => {
      s.messages.splice(1, 1);
    },
    "nothing lost at or below the cursors",
    "afterKill",
  ],
  [
    "a duplicate row",
    (s) => {
      s.messages.push({ ...(s.messages[0] as Snapshot["messages"][0]), id: "m9" });
    },
    "no duplicate rows",
    "afterKill",
  ],
  [
    "a stranger let through",
    (s) => {
      (s.messages[1] as { allowlist_status: string }).allowlist_status = "allowed";
    },
    "stored as the sender is classified",
    "afterKill",
  ],
  [
    "an allowed message without a delivery row",
    (s) => {
      s.deliveries.splice(0, 1);
    },
    "exactly one delivery row per allowlisted message",
    "afterKill",
  ],
  [
    "a key sent twice",
    (s) => {
      s.botPosts.push("chaos reply <k-00002>");
    },
    "no platform send twice for one Idempotency-Key",
    "afterKill",
  ],
  [
    "a record without its file",
    (s) => {
      s.attachmentFiles = [];
    },
    "every stored attachment has its bytes",
    "afterKill",
  ],
  [
    "a message not stored at the end",
    (s) => {
      s.deviceCursor = { position: 0n, pending: [] };
      s.messages.splice(1, 1);
    },
    "every source message stored exactly once",
    "final",
  ],
  [
    "a delivery still pending",
    (s) => {
      (s.deliveries[0] as { status: string }).status = "pending";
    },
    "every allowlisted message delivered at least once (dead only when always refused)",
    "final",
  ],
  [
    "delivered without the receiver accepting it",
    (s) => {
      (s.sink[0] as { accepted: number }).accepted = 0;
    },
    "every allowlisted message delivered at least once (dead only when always refused)",
    "final",
  ],
  [
    "a 200 without its outbound record",
    (s) => {
      s.messages.splice(4, 1);
    },
    "every send answered 200 was sent once and recorded once",
    "final",
  ],
  [
    "a key never answered",
    (s) => {
      (s.sends[0] as { answers: unknown[] }).answers = [{ status: 0, body: null }];
    },
    "every send answered 200 was sent once and recorded once",
    "final",
  ],
  [
    "a file not re-hosted",
    (s) => {
      s.attachments = [];
      s.attachmentFiles = [];
    },
    "every posted file re-hosted once with its message",
    "final",
  ],
  [
    "a world-readable database",
    (s) => {
      (s.files[1] as { mode: number }).mode = 0o644;
    },
    "database, WAL, SHM, logs 0600; their directories 0700",
    "final",
  ],
  [
    "a canary in a log",
    (s) => {
      s.canaryLeaks = ["gw.log"];
    },
    "no canary secret in any log or output",
    "final",
  ],
  [
    "an edit whose event was lost",
    (s) => {
      s.events.splice(0, 1);
    },
    "every change to an allowlisted message stored as exactly one event",
    "final",
  ],
  [
    "a reaction whose event was lost",
    (s) => {
      s.events.splice(1, 1);
    },
    "every change to an allowlisted message stored as exactly one event",
    "final",
  ],
  [
    "a change stored as two events",
    (s) => {
      s.events.push({
        ...(s.events[1] as Snapshot["events"][0]),
        id: "e9",
        dedupe_key: "discord:reaction:t:1",
      });
    },
    "no change stored as two events, no event without its change",
    "afterKill",
  ],
  [
    "an event for a change that did not happen",
    (s) => {
      s.events.push({
        ...(s.events[1] as Snapshot["events"][0]),
        id: "e9",
        data: JSON.stringify({ emoji: "😂" }),
        dedupe_key: "discord:reaction:s:9",
      });
    },
    "no change stored as two events, no event without its change",
    "afterKill",
  ],
  [
    "an event on a message the change did not touch",
    (s) => {
      (s.events[0] as { platform_id: string }).platform_id = "G2";
    },
    "no change stored as two events, no event without its change",
    "afterKill",
  ],
  [
    "an edited message with its old text",
    (s) => {
      (s.messages[0] as { text: string }).text = "chaos 1";
    },
    "edited messages carry their latest text, deleted ones are tombstones",
    "afterKill",
  ],
  [
    "a deleted message not a tombstone",
    (s) => {
      Object.assign(s.messages[5] as object, { allowlist_status: "allowed", text: "chaos 5" });
    },
    "edited messages carry their latest text, deleted ones are tombstones",
    "afterKill",
  ],
  [
    "a tombstone's text kept",
    (s) => {
      (s.messages[5] as { text: string }).text = "chaos 5";
    },
    "edited messages carry their latest text, deleted ones are tombstones",
    "afterKill",
  ],
  [
    "a tombstone no change made",
    (s) => {
      (s.messages[1] as { allowlist_status: string }).allowlist_status = "deleted";
    },
    "edited messages carry their latest text, deleted ones are tombstones",
    "afterKill",
  ],
  [
    "a delete whose event was lost",
    (s) => {
      s.events.splice(2, 1);
    },
    "every change to an allowlisted message stored as exactly one event",
    "final",
  ],
  [
    "a deleted message's delivery still pending",
    (s) => {
      (s.deliveries[2] as { status: string }).status = "pending";
    },
    "every allowlisted message delivered at least once (dead only when always refused)",
    "final",
  ],
])("%s fails its invariant", (_what, damage, name, stage) => {
  expect(failedAfter(damage, stage)).toContain(name);
});

test("an edit of a message deleted later keeps no text: counted per message, not matched by text", () => {
  const s = base();
  s.changes.push(
    change(6, { target: "500", original: "chaos 5" }, "message.edited", { text: "chaos 5 ~edit1" }),
  );
  const purgedEdit = {
    id: "e4",
    kind: "message.edited",
    source: "community_chat",
    platform_id: "500",
    sender_id: "ann",
    data: "{}",
    dedupe_key: "discord:edit:500:t:h",
  };
  s.events.push(purgedEdit);
  expect(failed(final(s))).toEqual([]);
  // Two such events for one edit made, or one on a message that was not deleted: caught.
  const twice = { ...s, events: [...s.events, { ...purgedEdit, id: "e5", dedupe_key: "x" }] };
  expect(failed(final(twice))).toContain("no change stored as two events, no event without its change");
  const alive = {
    ...s,
    events: [...s.events, { ...purgedEdit, id: "e6", platform_id: "G1", source: "device_messenger" }],
  };
  expect(failed(final(alive))).toContain("no change stored as two events, no event without its change");
});
