import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inbound, storeWithIngest } from "../helpers/messages.ts";

const STRANGER = { id: "+15555550999", displayName: "+15555550999" };
const count = (t: ReturnType<typeof storeWithIngest>, table: string) =>
  (t.store.db.query(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("ingest", () => {
  test("an allowlisted sender is stored allowed, with person id, display name override and a pending delivery", () => {
    const t = storeWithIngest();
    const [out] = t.ingest({ source: "device_messenger", messages: [inbound()], cursor: "7" });
    expect(out?.status).toBe("stored");
    if (out?.status !== "stored") return;
    expect(out.allowlistStatus).toBe("allowed");
    const row = t.store.messages.get(out.id);
    expect(row).toMatchObject({
      allowlist_status: "allowed",
      person_id: "friend",
      sender_name: "Friend",
      direction: "inbound",
    });
    expect(t.store.deliveries.forMessage(out.id)).toMatchObject({
      id: out.deliveryId,
      status: "pending",
      attempt_count: 0,
    });
    expect(t.store.cursors.get("device_messenger")?.position).toBe("7");
    expect(t.store.channels.get("+15555550100")?.platform_ref).toBe("any;-;+15555550100");
  });

  test("an unknown sender is quarantined: no person id, platform display name, no delivery", () => {
    const t = storeWithIngest();
    const [out] = t.ingest({
      source: "device_messenger",
      messages: [inbound({ sender: STRANGER })],
      cursor: "1",
    });
    if (out?.status !== "stored") throw new Error("not stored");
    expect(t.store.messages.get(out.id)).toMatchObject({
      allowlist_status: "unknown",
      person_id: null,
      sender_name: "+15555550999",
    });
    expect(out.deliveryId).toBeNull();
    expect(count(t, "webhook_deliveries")).toBe(0);
  });

  test("sender ids are compared after normalisation", () => {
    const t = storeWithIngest();
    const [out] = t.ingest({
      source: "device_messenger",
      messages: [inbound({ sender: { id: "+1 (555) 555-0100", displayName: "x" } })],
      cursor: null,
    });
    expect(out?.status === "stored" && out.allowlistStatus).toBe("allowed");
  });

  test("the same id on the other source is not allowed", () => {
    const t = storeWithIngest();
    const [out] = t.ingest({
      source: "community_chat",
      messages: [inbound({ source: "community_chat", sender: { id: "+15555550100", displayName: "x" } })],
      cursor: null,
    });
    expect(out?.status === "stored" && out.allowlistStatus).toBe("unknown");
  });

  test("no delivery row when webhooks are off", () => {
    const t = storeWithIngest({ webhooks: false });
    const [out] = t.ingest({ source: "device_messenger", messages: [inbound()], cursor: null });
    expect(out?.status === "stored" && out.deliveryId).toBeNull();
    expect(count(t, "webhook_deliveries")).toBe(0);
  });

  test("a repeat of (source, platform id) is a no-op, also within one batch, and the cursor still moves", () => {
    const t = storeWithIngest();
    const m = inbound();
    const [first] = t.ingest({ source: "device_messenger", messages: [m], cursor: "1" });
    const again = t.ingest({
      source: "device_messenger",
      messages: [m, { ...m, text: "changed" }],
      cursor: "2",
    });
    expect(again.map((o) => o.status)).toEqual(["duplicate", "duplicate"]);
    expect(again[0]?.id).toBe(first?.id as string);
    expect(count(t, "messages")).toBe(1);
    expect(count(t, "webhook_deliveries")).toBe(1);
    expect(t.store.messages.get(first?.id as string)?.text).toBe(m.text);
    expect(t.store.cursors.get("device_messenger")?.position).toBe("2");
  });

  test("an empty batch only advances the cursor (skipped rows such as reactions)", () => {
    const t = storeWithIngest();
    expect(t.ingest({ source: "device_messenger", messages: [], cursor: "99" })).toEqual([]);
    expect(t.store.cursors.get("device_messenger")).toMatchObject({
      position: "99",
      updated_at: t.clock.now(),
    });
  });

  test("reply_to resolves to the stored message id of the platform original, else null", () => {
    const t = storeWithIngest();
    const original = inbound();
    const [o] = t.ingest({ source: "device_messenger", messages: [original], cursor: null });
    const [r1, r2] = t.ingest({
      source: "device_messenger",
      messages: [
        inbound({ replyToPlatformId: original.platformId }),
        inbound({ replyToPlatformId: "never-seen" }),
      ],
      cursor: null,
    });
    expect(t.store.messages.get(r1?.id as string)?.reply_to).toBe(o?.id as string);
    expect(t.store.messages.get(r2?.id as string)?.reply_to).toBeNull();
  });

  test("attachments are recorded with the message", () => {
    const t = storeWithIngest();
    const att = {
      id: t.ids.attachment(),
      mime: "image/png",
      sizeBytes: 3,
      fileName: "f.png",
      platformRef: "a1",
    };
    const [o] = t.ingest({
      source: "device_messenger",
      messages: [inbound({ attachments: [att] })],
      cursor: null,
    });
    expect(t.store.attachments.forMessage(o?.id as string)).toEqual([
      {
        id: att.id,
        message_id: o?.id as string,
        mime: "image/png",
        size_bytes: 3,
        file_name: "f.png",
        platform_ref: "a1",
        created_at: t.clock.now(),
      },
    ]);
  });

  test("the staged bytes of a duplicate are removed; those of a stored message stay", () => {
    const t = storeWithIngest();
    mkdirSync(join(t.dir, "attachments"));
    const stage = (name: string) => {
      writeFileSync(join(t.dir, "attachments", name), "abc");
      return { id: t.ids.attachment(), mime: "text/plain", sizeBytes: 3, fileName: name, platformRef: null };
    };
    const m = inbound({ attachments: [stage("one")] });
    t.ingest({ source: "device_messenger", messages: [m], cursor: null });
    t.ingest({ source: "device_messenger", messages: [{ ...m, attachments: [stage("two")] }], cursor: null });
    expect(existsSync(join(t.dir, "attachments/one"))).toBe(true);
    expect(existsSync(join(t.dir, "attachments/two"))).toBe(false);
  });

  test("own messages typed elsewhere are stored outbound: no delivery, no channel observed", () => {
    const t = storeWithIngest();
    const [o] = t.ingest({
      source: "device_messenger",
      messages: [
        inbound({ direction: "outbound", channel: { id: "+15555550111", type: "dm", platformRef: "x" } }),
      ],
      cursor: null,
    });
    expect(t.store.messages.get(o?.id as string)).toMatchObject({
      allowlist_status: "outbound",
      direction: "outbound",
      person_id: null,
    });
    expect(count(t, "webhook_deliveries")).toBe(0);
    expect(t.store.channels.get("+15555550111")).toBeNull();
  });

  test("messages already stored are not reclassified when the allowlist changes", () => {
    const t = storeWithIngest();
    const [before] = t.ingest({ source: "device_messenger", messages: [inbound()], cursor: null });
    t.setAllowlist([]);
    const [after] = t.ingest({ source: "device_messenger", messages: [inbound()], cursor: null });
    expect(t.store.messages.get(before?.id as string)?.allowlist_status).toBe("allowed");
    expect(t.store.messages.get(after?.id as string)?.allowlist_status).toBe("unknown");
  });
});

describe("all or nothing", () => {
  // Real SQLite failures injected midway through the transaction with triggers: no mocks.
  test.each([
    ["the delivery insert", "webhook_deliveries"],
    ["the cursor update", "connector_cursors"],
    ["the attachment insert", "attachments"],
  ])("a failure in %s leaves nothing written, and the staged file is removed", (_what, table) => {
    const t = storeWithIngest();
    t.ingest({ source: "device_messenger", messages: [inbound()], cursor: "1" });
    t.store.db.run(
      `CREATE TRIGGER fail_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'injected'); END`,
    );
    mkdirSync(join(t.dir, "attachments"), { recursive: true });
    writeFileSync(join(t.dir, "attachments/staged"), "x");
    const batch = [
      inbound(),
      inbound({
        attachments: [
          { id: t.ids.attachment(), mime: "text/plain", sizeBytes: 1, fileName: "staged", platformRef: null },
        ],
      }),
    ];
    const snapshot = () =>
      `${["messages", "attachments", "webhook_deliveries", "channels", "read_runs"].map((x) => count(t, x))}` +
      `|${t.store.cursors.get("device_messenger")?.position}`;
    const before = snapshot();
    expect(() => t.ingest({ source: "device_messenger", messages: batch, cursor: "3" })).toThrow("injected");
    expect(snapshot()).toBe(before);
    expect(existsSync(join(t.dir, "attachments/staged"))).toBe(false);
    t.store.db.run(`DROP TRIGGER fail_${table}`);
    expect(
      t.ingest({ source: "device_messenger", messages: batch, cursor: "3" }).map((o) => o.status),
    ).toEqual(["stored", "stored"]);
  });

  test("a batch mixing sources is refused whole", () => {
    const t = storeWithIngest();
    expect(() =>
      t.ingest({
        source: "device_messenger",
        messages: [inbound(), inbound({ source: "community_chat" })],
        cursor: "5",
      }),
    ).toThrow(/holds a community_chat message/);
    expect(count(t, "messages")).toBe(0);
    expect(t.store.cursors.get("device_messenger")).toBeNull();
  });
});

describe("positions inside a channel", () => {
  const CHANNEL = { id: "community_chat:channel:900", type: "group" as const, platformRef: "900" };
  const discord = (platformId: string) =>
    inbound({
      source: "community_chat",
      channel: CHANNEL,
      platformId,
      sender: { id: "1001", displayName: "Ann" },
    });
  const cursor = (t: ReturnType<typeof storeWithIngest>) => t.store.channels.get(CHANNEL.id)?.cursor ?? null;

  test("a channel's position moves only forward, compared as numbers, and only for a known channel", () => {
    const t = storeWithIngest();
    t.ingest({
      source: "community_chat",
      messages: [],
      cursor: null,
      channelCursor: { channelId: CHANNEL.id, position: "5" },
    });
    expect(t.store.channels.get(CHANNEL.id)).toBeNull();
    t.ingest({
      source: "community_chat",
      messages: [discord("999")],
      cursor: null,
      channelCursor: { channelId: CHANNEL.id, position: "999" },
    });
    expect(cursor(t)).toBe("999");
    for (const [position, expected] of [
      ["1000", "1000"],
      ["998", "1000"],
      ["10001", "10001"],
      ["9999", "10001"],
    ] as const) {
      t.ingest({
        source: "community_chat",
        messages: [],
        cursor: null,
        channelCursor: { channelId: CHANNEL.id, position },
      });
      expect(cursor(t)).toBe(expected);
    }
    expect(t.store.channels.ofSource("community_chat").map((c) => c.id)).toEqual([CHANNEL.id]);
    expect(t.store.channels.ofSource("device_messenger")).toEqual([]);
  });

  test("the position is written in the batch's transaction: a failed batch leaves it where it was", () => {
    const t = storeWithIngest();
    t.ingest({
      source: "community_chat",
      messages: [discord("100")],
      cursor: null,
      channelCursor: { channelId: CHANNEL.id, position: "100" },
    });
    t.store.db.run(
      "CREATE TRIGGER fail_att BEFORE INSERT ON attachments BEGIN SELECT RAISE(ABORT, 'injected'); END",
    );
    const withFile = {
      ...discord("101"),
      attachments: [
        { id: t.ids.attachment(), mime: "image/png", sizeBytes: 1, fileName: null, platformRef: "7" },
      ],
    };
    expect(() =>
      t.ingest({
        source: "community_chat",
        messages: [withFile],
        cursor: null,
        channelCursor: { channelId: CHANNEL.id, position: "101" },
      }),
    ).toThrow("injected");
    expect(cursor(t)).toBe("100");
  });
});
