/**
 * Changes to stored messages through ingest (extensions.md §1), on a real store: an edit changes the
 * text everywhere and stores one event; a replay stores nothing more; a delete leaves a tombstone (text,
 * raw and attachment bytes purged, gone from every read, its pending webhook dropped); reactions change
 * nothing; visibility follows the target and the reactor; event webhooks only for the kinds asked for.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NormalizedChange } from "../../src/ingest/changes.ts";
import { toEvent } from "../../src/store/events.ts";
import { FRIEND, inbound, storeWithIngest } from "../helpers/messages.ts";

const T0 = Date.UTC(2026, 0, 1);
const STRANGER = { id: "+15555550199", displayName: "+15555550199" };

function world(opts: Parameters<typeof storeWithIngest>[0] = {}) {
  const t = storeWithIngest(opts);
  const put = (m = inbound({ timestampMs: T0 })) => {
    const [o] = t.ingest({ source: "device_messenger", messages: [m], cursor: null });
    return { id: o?.id as string, platformId: m.platformId };
  };
  const change = (...changes: NormalizedChange[]) =>
    t.ingest({ source: "device_messenger", messages: [], cursor: null, changes });
  const events = () => t.store.events.visibleAfter("", 100).map(toEvent);
  const allEvents = () => t.store.db.query("SELECT kind, visible FROM events ORDER BY id").all();
  return { ...t, put, change, events, allEvents };
}

const base = (platformId: string, key: string) => ({
  source: "device_messenger" as const,
  targetPlatformId: platformId,
  timestampMs: T0 + 1000,
  dedupeKey: key,
});

describe("edits", () => {
  test("the text changes everywhere; one event with both texts; a replay stores nothing", () => {
    const w = world();
    const m = w.put(inbound({ timestampMs: T0, text: "helo" }));
    w.change({ ...base(m.platformId, "e1"), kind: "edit", text: "hello" });
    w.change({ ...base(m.platformId, "e1"), kind: "edit", text: "hello" });
    expect(w.store.messages.get(m.id)?.text).toBe("hello");
    expect(
      w.store.reads.unread("a", { source: null, channelId: null, sinceMs: null, limit: 5 })[0]?.text,
    ).toBe("hello");
    const events = w.events();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: "message.edited",
      message_id: m.id,
      source: "device_messenger",
      channel_id: FRIEND.id,
      sender: { id: FRIEND.id, display_name: "Friend", person_id: "friend" },
      timestamp: new Date(T0 + 1000).toISOString(),
      data: { text: "hello", previous_text: "helo" },
    });
    expect(events[0]?.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(w.announced.map((e) => e.id)).toEqual([events[0]?.id as string]);
  });

  test("the same text again (an update that changed nothing) is no edit", () => {
    const w = world();
    const m = w.put(inbound({ timestampMs: T0, text: "same" }));
    w.change({ ...base(m.platformId, "e1"), kind: "edit", text: "same" });
    expect(w.allEvents()).toEqual([]);
  });
});

describe("deletes", () => {
  test("a tombstone: text, raw and files purged, out of every read, its pending webhook dropped", () => {
    const w = world();
    mkdirSync(join(w.dir, "attachments"), { recursive: true });
    writeFileSync(join(w.dir, "attachments/att_x"), "bytes");
    const m = w.put(
      inbound({
        timestampMs: T0,
        text: "regret",
        attachments: [{ id: "att_x", mime: "image/png", sizeBytes: 5, fileName: "att_x", platformRef: null }],
      }),
    );
    expect(w.store.deliveries.forMessage(m.id)?.status).toBe("pending");
    w.change({ ...base(m.platformId, "d1"), kind: "delete" });
    const row = w.store.messages.get(m.id);
    expect(row).toMatchObject({ allowlist_status: "deleted", text: "", raw: "{}" });
    expect(existsSync(join(w.dir, "attachments/att_x"))).toBe(false);
    expect(w.store.attachments.get("att_x")?.file_name).toBeNull();
    expect(w.store.deliveries.forMessage(m.id)).toBeNull();
    expect(w.store.reads.unread("a", { source: null, channelId: null, sinceMs: null, limit: 5 })).toEqual([]);
    expect(w.events().map((e) => [e.kind, e.data])).toEqual([["message.deleted", {}]]);
    // A late duplicate of the message is not ingested again; changes after the delete are dropped.
    const [again] = w.ingest({
      source: "device_messenger",
      messages: [inbound({ platformId: m.platformId, timestampMs: T0 })],
      cursor: null,
    });
    expect(again?.status).toBe("duplicate");
    w.change({ ...base(m.platformId, "e9"), kind: "edit", text: "back" });
    expect(w.store.messages.get(m.id)?.text).toBe("");
    expect(w.allEvents()).toHaveLength(1);
  });
});

describe("reactions and who may see an event", () => {
  const react = (platformId: string, key: string, reactor = STRANGER, byOwner = false, added = true) =>
    ({
      ...base(platformId, key),
      kind: "reaction",
      emoji: "👍",
      added,
      reactor,
      service: "iMessage",
      byOwner,
    }) as const;

  test("an allowlisted reactor or the owner: visible; a stranger: stored, never shown", () => {
    const w = world();
    const m = w.put(inbound({ timestampMs: T0, text: "the message" }));
    w.change(
      react(m.platformId, "r1", { id: FRIEND.id, displayName: FRIEND.id }),
      react(m.platformId, "r2", STRANGER),
      react(m.platformId, "r3", { id: "me", displayName: "Me" }, true, false),
    );
    expect(w.events().map((e) => [e.kind, e.sender.id, e.sender.display_name, e.data])).toEqual([
      ["reaction.added", FRIEND.id, "Friend", { emoji: "👍" }],
      ["reaction.removed", "me", "Me", { emoji: "👍" }],
    ]);
    expect(w.allEvents()).toHaveLength(3);
    expect(w.store.messages.get(m.id)?.text).toBe("the message");
  });

  test("events of a quarantined message, and gw's own actions, are stored and never shown", () => {
    const w = world();
    const q = w.put(inbound({ timestampMs: T0, sender: STRANGER }));
    const m = w.put();
    w.change(
      { ...base(q.platformId, "e1"), kind: "edit", text: "changed" },
      { ...react(m.platformId, "r1", { id: "me", displayName: "Me" }, true), ownAction: true },
    );
    expect(w.allEvents()).toEqual([
      { kind: "message.edited", visible: 0 },
      { kind: "reaction.added", visible: 0 },
    ]);
    expect(w.events()).toEqual([]);
    expect(w.announced).toEqual([]);
  });

  test("a change to a message gw never stored is dropped", () => {
    const w = world();
    w.change({ ...base("guid-never-seen", "e1"), kind: "edit", text: "x" });
    expect(w.allEvents()).toEqual([]);
  });
});

describe("event webhooks", () => {
  test("only the kinds asked for get a delivery, with the event's id; messages only with `message`", () => {
    const w = world({ webhookKinds: ["reaction.added"] });
    const m = w.put();
    expect(w.store.deliveries.forMessage(m.id)).toBeNull();
    w.change(
      { ...base(m.platformId, "e1"), kind: "edit", text: "edited" },
      {
        ...base(m.platformId, "r1"),
        kind: "reaction",
        emoji: "❤️",
        added: true,
        reactor: { id: FRIEND.id, displayName: "x" },
        service: "iMessage",
        byOwner: false,
      },
    );
    const rows = w.store.db.query("SELECT message_id, event_id FROM webhook_deliveries").all() as {
      message_id: string;
      event_id: string;
    }[];
    const reaction = w.events().find((e) => e.kind === "reaction.added");
    expect(rows).toEqual([{ message_id: m.id, event_id: reaction?.id as string }]);
  });
});
