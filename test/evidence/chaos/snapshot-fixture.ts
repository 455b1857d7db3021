/**
 * What the chaos oracle's tests (checks.test.ts, checks-changes.test.ts) start from: `base()`, a snapshot
 * of a run in which every invariant holds (messages, deliveries, idempotency keys, files, logs, and the
 * edits, reactions and deletes made with their events), `change()` to add a change record, and
 * `failedAfter(damage, stage)`: the names of the invariants that fail once `damage` is done to it.
 */
import type { ChangeRecord } from "./changes.ts";
import { afterKill, final, type Verdict } from "./checks.ts";
import type { Snapshot } from "./snapshot.ts";

/** Damage done to a consistent snapshot, named for what the kill loop hunts for. */
export type Damage = (s: Snapshot) => void;

export function change(
  n: number,
  on: { source?: ChangeRecord["source"]; target: string; original: string; targetAllowed?: boolean },
  kind: ChangeRecord["kind"],
  more: Partial<ChangeRecord>,
): ChangeRecord {
  return {
    n,
    source: on.source ?? "community_chat",
    target: on.target,
    targetAllowed: on.targetAllowed ?? true,
    original: on.original,
    kind,
    at: n,
    promised: true,
    ...more,
  };
}

export function base(): Snapshot {
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
        text: "chaos 1 ~edited",
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
      {
        id: "m6",
        source: "community_chat",
        platform_id: "500",
        allowlist_status: "deleted",
        direction: "inbound",
        text: "",
      },
    ],
    deliveries: [
      { id: "d1", message_id: "m1", status: "delivered", attempt_count: 1 },
      { id: "d3", message_id: "m3", status: "dead", attempt_count: 5 },
      { id: "d6", message_id: "m6", status: "delivered", attempt_count: 1 },
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
      {
        source: "community_chat",
        platformId: "500",
        order: 500n,
        sender: "allowed",
        text: "",
        files: 0,
        deleted: true,
      },
    ],
    botPosts: ["chaos reply <k-00002>"],
    sink: [
      { deliveryId: "d1", messageId: "m1", text: "chaos 1", hits: 2, accepted: 1 },
      { deliveryId: "d3", messageId: "m3", text: "chaos 3 [doom]", hits: 5, accepted: 0 },
      { deliveryId: "d6", messageId: "m6", text: "chaos 5", hits: 1, accepted: 1 },
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
    events: [
      {
        id: "e1",
        kind: "message.edited",
        source: "device_messenger",
        platform_id: "G1",
        sender_id: "+15555550100",
        data: JSON.stringify({ text: "chaos 1 ~edited", previous_text: "chaos 1" }),
        dedupe_key: "imessage:edit:G1:1",
      },
      {
        id: "e2",
        kind: "reaction.added",
        source: "community_chat",
        platform_id: "300",
        sender_id: "ann",
        data: JSON.stringify({ emoji: "👍" }),
        dedupe_key: "discord:reaction:s:5",
      },
      {
        id: "e3",
        kind: "message.deleted",
        source: "community_chat",
        platform_id: "500",
        sender_id: "ann",
        data: "{}",
        dedupe_key: "discord:delete:500",
      },
    ],
    changes: [
      change(1, { source: "device_messenger", target: "G1", original: "chaos 1" }, "message.edited", {
        text: "chaos 1 ~edited",
      }),
      change(2, { target: "300", original: "chaos 3 [doom]" }, "reaction.added", {
        emoji: "👍",
        reactor: "ann",
      }),
      change(3, { target: "500", original: "chaos 5" }, "message.deleted", {}),
      // A Discord edit a kill caught before gw stored it: owed nothing, and nothing stored.
      change(4, { target: "300", original: "chaos 3 [doom]" }, "message.edited", {
        text: "chaos 3 [doom] ~edit1",
        promised: false,
      }),
      // A tapback on a quarantined message: stored (invisible) or not, it is not judged.
      change(
        5,
        { source: "device_messenger", target: "G2", original: "chaos 2", targetAllowed: false },
        "reaction.added",
        { emoji: "❤️", reactor: "+15555550199" },
      ),
    ],
    files: [
      { path: "/d", mode: 0o700, dir: true },
      { path: "/d/gw.db", mode: 0o600, dir: false },
    ],
    canaryLeaks: [],
  };
}

export const failed = (vs: Verdict[]) => vs.filter((v) => !v.held).map((v) => v.name);

/** The invariants that fail after `damage` to base(), checked as after a kill or at the end. */
export function failedAfter(damage: Damage, stage: "afterKill" | "final"): string[] {
  const s = base();
  damage(s);
  return failed(stage === "afterKill" ? afterKill(s) : final(s));
}
