/**
 * The chaos oracle itself: a consistent snapshot passes every invariant, and each kind of damage the
 * kill loop hunts for (a row lost behind the cursor, a duplicate row, a missing delivery row, a key
 * sent twice, a 200 without its record, a pending delivery at the end, a loose file mode, a canary in
 * a log) fails the invariant that names it — so a green chaos run means something.
 */
import { expect, test } from "bun:test";
import { afterKill, final, type Verdict } from "./checks.ts";
import type { Snapshot } from "./snapshot.ts";

function base(): Snapshot {
  return {
    integrity: "ok",
    foreignKeyViolations: 0,
    messages: [
      {
        id: "m1",
        source: "device_messenger",
        platform_id: "G1",
        allowlist_status: "allowed",
        direction: "inbound",
        text: "chaos 1",
      },
      {
        id: "m2",
        source: "device_messenger",
        platform_id: "G2",
        allowlist_status: "unknown",
        direction: "inbound",
        text: "chaos 2",
      },
      {
        id: "m3",
        source: "community_chat",
        platform_id: "300",
        allowlist_status: "allowed",
        direction: "inbound",
        text: "chaos 3 [doom]",
      },
      {
        id: "m4",
        source: "device_messenger",
        platform_id: "G3",
        allowlist_status: "outbound",
        direction: "outbound",
        text: "chaos reply <k-00001>",
      },
      {
        id: "m5",
        source: "community_chat",
        platform_id: "400",
        allowlist_status: "outbound",
        direction: "outbound",
        text: "chaos reply <k-00002>",
      },
    ],
    deliveries: [
      { id: "d1", message_id: "m1", status: "delivered", attempt_count: 1 },
      { id: "d3", message_id: "m3", status: "dead", attempt_count: 5 },
    ],
    attachments: [{ id: "a1", message_id: "m3", file_name: "a1" }],
    attachmentFiles: ["a1"],
    deviceCursor: { position: 3n, pending: [] },
    discordCursor: 300n,
    sources: [
      {
        source: "device_messenger",
        platformId: "G1",
        order: 1n,
        sender: "allowed",
        text: "chaos 1",
        files: 0,
      },
      {
        source: "device_messenger",
        platformId: "G2",
        order: 2n,
        sender: "stranger",
        text: "chaos 2",
        files: 0,
      },
      {
        source: "device_messenger",
        platformId: "G3",
        order: 3n,
        sender: "own",
        text: "chaos reply <k-00001>",
        files: 0,
      },
      {
        source: "community_chat",
        platformId: "300",
        order: 300n,
        sender: "allowed",
        text: "chaos 3 [doom]",
        files: 1,
      },
    ],
    botPosts: ["chaos reply <k-00002>"],
    sink: [
      { deliveryId: "d1", messageId: "m1", text: "chaos 1", hits: 2, accepted: 1 },
      { deliveryId: "d3", messageId: "m3", text: "chaos 3 [doom]", hits: 5, accepted: 0 },
    ],
    sends: [
      {
        key: "k-00001",
        platform: "imessage",
        channelId: "+15555550100",
        text: "chaos reply <k-00001>",
        answers: [{ status: 200, body: { message_id: "m4" } }],
      },
      {
        key: "k-00002",
        platform: "discord",
        channelId: "community_chat:channel:1",
        text: "chaos reply <k-00002>",
        answers: [
          { status: 0, body: null },
          { status: 200, body: { message_id: "m5" } },
        ],
      },
    ],
    files: [
      { path: "/d", mode: 0o700, dir: true },
      { path: "/d/gw.db", mode: 0o600, dir: false },
    ],
    canaryLeaks: [],
  };
}

const failed = (vs: Verdict[]) => vs.filter((v) => !v.held).map((v) => v.name);

test("a consistent snapshot holds every invariant", () => {
  expect(failed(afterKill(base()))).toEqual([]);
  expect(failed(final(base()))).toEqual([]);
});

test.each<[string, (s: Snapshot) => void, string, "afterKill" | "final"]>([
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
])("%s fails its invariant", (_what, damage, name, stage) => {
  const s = base();
  damage(s);
  expect(failed(stage === "afterKill" ? afterKill(s) : final(s))).toContain(name);
});
