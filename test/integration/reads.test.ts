import { describe, expect, test } from "bun:test";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { createOutboundRecorder } from "../../src/ingest/outbound.ts";
import { envelopeJson, toEnvelope } from "../../src/store/envelope.ts";
import type { MessageRow } from "../../src/store/messages.ts";
import type { UnreadFilter } from "../../src/store/reads.ts";
import type { Store } from "../../src/store/store.ts";
import { FRIEND, inbound, storeWithIngest } from "../helpers/messages.ts";

const STRANGER = { id: "+15555550999", displayName: "Stranger" };
const T0 = Date.UTC(2026, 0, 1);
const ALL: UnreadFilter = { source: null, channelId: null, sinceMs: null, limit: 100 };

function runs(t: { store: Store }, agent = "a") {
  return t.store.db
    .query(
      "SELECT start_id, end_id FROM read_runs WHERE agent_id = ?1 AND scope = '*' ORDER BY start_ts, start_id",
    )
    .all(agent) as { start_id: string; end_id: string }[];
}

function seeded(messages: NormalizedMessage[]) {
  const t = storeWithIngest();
  const ids = t.ingest({ source: "device_messenger", messages, cursor: null }).map((o) => o.id);
  return { ...t, ids: ids as string[] };
}

describe("unread", () => {
  test("allowed messages only, oldest first, per agent", () => {
    const t = seeded([
      inbound({ timestampMs: T0 + 3000 }),
      inbound({ timestampMs: T0 + 1000 }),
      inbound({ timestampMs: T0 + 2000, sender: STRANGER }),
      inbound({ timestampMs: T0 + 1000 }),
      inbound({ timestampMs: T0 + 500, direction: "outbound" }),
    ]);
    const [late, early, , tie] = t.ids;
    expect(t.store.reads.unread("a", ALL).map((r) => r.id)).toEqual([early, tie, late] as string[]);
    expect(t.store.reads.markRead("a", [early as string], 1)).toBe(1);
    expect(t.store.reads.unread("a", ALL).map((r) => r.id)).toEqual([tie, late] as string[]);
    expect(t.store.reads.unread("b", ALL).map((r) => r.id)).toEqual([early, tie, late] as string[]);
  });

  test("filters: source, channel, since (strictly greater), limit", () => {
    const t = seeded([
      inbound({ timestampMs: T0 + 1000 }),
      inbound({
        timestampMs: T0 + 2000,
        channel: { id: "chat-guid-1", type: "group", platformRef: "chat-guid-1" },
      }),
      inbound({ timestampMs: T0 + 3000 }),
    ]);
    const [m1, m2, m3] = t.ids;
    const ids = (f: Partial<UnreadFilter>) => t.store.reads.unread("a", { ...ALL, ...f }).map((r) => r.id);
    expect(ids({ channelId: "chat-guid-1" })).toEqual([m2] as string[]);
    expect(ids({ sinceMs: T0 + 1000 })).toEqual([m2, m3] as string[]);
    expect(ids({ sinceMs: T0 + 999 })).toEqual([m1, m2, m3] as string[]);
    expect(ids({ sinceMs: T0 + 3000 })).toEqual([]);
    expect(ids({ limit: 2 })).toEqual([m1, m2] as string[]);
    expect(ids({ source: "community_chat" })).toEqual([]);
    expect(ids({ source: "device_messenger", channelId: "+15555550100" })).toEqual([m1, m3] as string[]);
  });

  test("mark_read counts unique submitted ids; unknown ids are counted and skipped; empty is 0; again is a no-op", () => {
    const t = seeded([inbound(), inbound()]);
    const [m1] = t.ids as [string];
    expect(t.store.reads.markRead("a", [], 1)).toBe(0);
    expect(t.store.reads.markRead("a", [m1, m1, "msg_00000000000000000000000000"], 1)).toBe(2);
    expect(t.store.reads.markRead("a", [m1], 2)).toBe(1);
    expect(t.store.db.query("SELECT agent_id, read_at FROM read_marks").all()).toEqual([
      { agent_id: "a", read_at: 1 },
    ]);
  });

  test("a message stored later inside a read run is unread (the run splits)", () => {
    const t = seeded(Array.from({ length: 20 }, (_, i) => inbound({ timestampMs: T0 + 10_000 + i })));
    t.store.reads.markRead("a", t.ids, 1);
    expect(t.store.reads.unread("a", ALL)).toEqual([]);
    expect(runs(t)).toHaveLength(1);
    const [late] = t.ingest({
      source: "device_messenger",
      messages: [inbound({ timestampMs: T0 + 10_005 })],
      cursor: null,
    });
    expect(t.store.reads.unread("a", ALL).map((r) => r.id)).toEqual([late?.id as string]);
    expect(runs(t)).toHaveLength(2);
    t.store.reads.markRead("a", [late?.id as string], 2);
    expect(runs(t)).toHaveLength(1);
  });

  test("runs merge as gaps are filled, whatever the marking order", () => {
    const t = seeded(Array.from({ length: 10 }, (_, i) => inbound({ timestampMs: T0 + i })));
    const ids = t.ids;
    const pick = (...at: number[]) => at.map((i) => ids[i] as string);
    t.store.reads.markRead("a", pick(0, 2, 4, 9), 1);
    expect(runs(t)).toHaveLength(4);
    t.store.reads.markRead("a", pick(1, 3), 1);
    expect(runs(t)).toHaveLength(2);
    expect(t.store.reads.unread("a", ALL).map((r) => r.id)).toEqual(ids.slice(5, 9));
    t.store.reads.markRead("a", pick(8, 6, 7, 5), 1);
    expect(runs(t)).toEqual([{ start_id: pick(0)[0] as string, end_id: pick(9)[0] as string }]);
  });

  test("model check: random stores and marks by three agents agree with a naive unread", () => {
    const t = storeWithIngest({
      entries: [FRIEND, { source: "community_chat", id: "1001", person_id: "friend", display_name: null }],
    });
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    type Model = { id: string; ts: number; allowed: boolean; source: string; channel: string };
    const all: Model[] = [];
    const marked = new Map<string, Set<string>>(["a", "b", "c"].map((a) => [a, new Set<string>()]));
    const channels = ["+15555550100", "+15555550101", "chat-guid-x", "community_chat:dm:9"];
    const sourceOf = (c: string) => (c.startsWith("community_chat:") ? "community_chat" : "device_messenger");
    for (let step = 0; step < 600; step++) {
      if (rand(3) > 0 || all.length < 5) {
        const kind = rand(10);
        const channel = channels[rand(4)] as string;
        const source = sourceOf(channel);
        const m = inbound({
          source,
          timestampMs: T0 + rand(500),
          channel: { id: channel, type: "dm", platformRef: channel },
          sender:
            kind < 2
              ? STRANGER
              : { id: source === "community_chat" ? "1001" : "+15555550100", displayName: "x" },
          direction: kind === 9 ? "outbound" : "inbound",
        });
        const [o] = t.ingest({ source, messages: [m], cursor: null });
        all.push({
          id: o?.id as string,
          ts: m.timestampMs,
          allowed: kind >= 2 && kind < 9,
          source: m.source,
          channel,
        });
      } else {
        const agent = ["a", "b", "c"][rand(3)] as string;
        const ids = Array.from({ length: 1 + rand(8) }, () => (all[rand(all.length)] as Model).id);
        t.store.reads.markRead(agent, ids, step);
        for (const id of ids) if (all.find((m) => m.id === id)?.allowed) marked.get(agent)?.add(id);
      }
      for (const agent of ["a", "b", "c"]) {
        const sinceMs = rand(2) ? null : T0 + rand(500);
        const channelId = rand(2) ? null : (channels[rand(4)] as string);
        const source = rand(3) ? null : sourceOf(channels[rand(4)] as string);
        const limit = 1 + rand(30);
        const expected = all
          .filter((m) => m.allowed && !marked.get(agent)?.has(m.id))
          .filter(
            (m) =>
              (sinceMs === null || m.ts > sinceMs) &&
              (channelId === null || m.channel === channelId) &&
              (source === null || m.source === source),
          )
          .sort((x, y) => x.ts - y.ts || (x.id < y.id ? -1 : 1))
          .slice(0, limit)
          .map((m) => m.id);
        const got = t.store.reads.unread(agent, { source, channelId, sinceMs, limit }).map((r) => r.id);
        expect(got).toEqual(expected);
      }
    }
    for (const agent of ["a", "b", "c"]) {
      const before = runs(t, agent);
      t.store.reads.rebuildRuns(agent);
      expect(runs(t, agent)).toEqual(before);
    }
  });
});

describe("context and quarantine", () => {
  test("context: chronological, visible neighbours in the same channel only", () => {
    const other = { id: "+15555550122", type: "dm" as const, platformRef: "x" };
    const t = seeded([
      inbound({ timestampMs: T0 + 1 }),
      inbound({ timestampMs: T0 + 2, sender: STRANGER }),
      inbound({ timestampMs: T0 + 3, direction: "outbound" }),
      inbound({ timestampMs: T0 + 4, channel: other }),
      inbound({ timestampMs: T0 + 5 }),
      inbound({ timestampMs: T0 + 6 }),
      inbound({ timestampMs: T0 + 7 }),
    ]);
    const [a, , own, , target, after1, after2] = t.ids;
    const row = t.store.messages.get(target as string);
    if (!row) throw new Error("missing");
    expect(t.store.messages.context(row, 5, 1).map((r) => r.id)).toEqual([
      a,
      own,
      target,
      after1,
    ] as string[]);
    expect(t.store.messages.context(row, 0, 0).map((r) => r.id)).toEqual([target] as string[]);
    expect(t.store.messages.context(row, 1, 5).map((r) => r.id)).toEqual([
      own,
      target,
      after1,
      after2,
    ] as string[]);
  });

  test("quarantined senders: the last message is the newest, and among one millisecond the last to arrive", () => {
    const t = storeWithIngest();
    const OTHER = "+15555550188";
    const one = (sender: string, text: string, timestampMs: number) =>
      t.ingest({
        source: "device_messenger",
        messages: [inbound({ timestampMs, sender: { id: sender, displayName: sender }, text })],
        cursor: null,
      });
    one(STRANGER.id, "first", T0 + 5);
    one(OTHER, "other", T0 + 5);
    for (const n of [2, 3, 4, 5]) one(STRANGER.id, `tie ${n}`, T0 + 9);
    one(OTHER, "other last", T0 + 9);
    const senders = t.store.messages.quarantinedSenders(10);
    expect(senders.map((s) => [s.sender_id, s.last_text, s.count])).toEqual([
      [OTHER, "other last", 2],
      [STRANGER.id, "tie 5", 5],
    ]);
    expect(t.store.messages.quarantinedSenders(1).map((s) => s.last_text)).toEqual(["other last"]);
  });

  test("quarantine: unknown senders only, newest first, since and limit", () => {
    const t = seeded([
      inbound({ timestampMs: T0 + 1, sender: STRANGER }),
      inbound({ timestampMs: T0 + 2 }),
      inbound({ timestampMs: T0 + 3, sender: STRANGER }),
      inbound({ timestampMs: T0 + 4, sender: STRANGER }),
    ]);
    const [q1, , q3, q4] = t.ids;
    expect(t.store.messages.quarantine(null, 20).map((r) => r.id)).toEqual([q4, q3, q1] as string[]);
    expect(t.store.messages.quarantine(T0 + 1, 20).map((r) => r.id)).toEqual([q4, q3] as string[]);
    expect(t.store.messages.quarantine(null, 1).map((r) => r.id)).toEqual([q4] as string[]);
  });
});

describe("outbound records and envelopes", () => {
  test("a send is one outbound row; linking the platform id makes the later sighting a duplicate", () => {
    const t = storeWithIngest();
    const record = createOutboundRecorder({ store: t.store });
    const sent = record({
      sentAtMs: t.clock.now(),
      id: t.ids.message(),
      source: "device_messenger",
      channel: { id: "+15555550100", type: "dm" },
      sender: { id: "me", displayName: "Me" },
      text: "reply",
      replyTo: null,
      platformId: null,
      raw: {},
    });
    expect(sent.sentAtMs).toBe(t.clock.now());
    expect(t.store.messages.linkPlatformId(sent.id, "guid-sent")).toBe(true);
    expect(t.store.messages.linkPlatformId(sent.id, "guid-other")).toBe(false);
    const [seen] = t.ingest({
      source: "device_messenger",
      messages: [inbound({ platformId: "guid-sent", direction: "outbound" })],
      cursor: "9",
    });
    expect(seen).toEqual({ status: "duplicate", id: sent.id });
  });

  test("toEnvelope maps a stored row to the spec's Envelope", () => {
    const t = storeWithIngest();
    const att = {
      id: t.ids.attachment(),
      mime: "image/jpeg",
      sizeBytes: 10,
      fileName: "x",
      platformRef: null,
    };
    const [o] = t.ingest({
      source: "device_messenger",
      messages: [
        inbound({ timestampMs: Date.UTC(2026, 10, 22, 1, 2, 3, 4), attachments: [att], raw: { ROWID: 5 } }),
      ],
      cursor: null,
    });
    const row = t.store.messages.get(o?.id as string);
    if (!row) throw new Error("missing");
    expect(toEnvelope(row, t.store.attachments.forMessage(row.id), "http://127.0.0.1:8080")).toEqual({
      id: row.id,
      source: "device_messenger",
      channel_id: "+15555550100",
      channel_type: "dm",
      sender: { id: "+15555550100", display_name: "Friend", person_id: "friend" },
      text: row.text,
      attachments: [
        {
          id: att.id,
          url: `http://127.0.0.1:8080/attachments/${att.id}`,
          mime: "image/jpeg",
          size_bytes: 10,
        },
      ],
      reply_to: null,
      timestamp: "2026-11-22T01:02:03.004Z",
      direction: "inbound",
      raw: { ROWID: 5 },
    });
  });
});

describe("envelope JSON", () => {
  test("envelopeJson writes exactly JSON.stringify(toEnvelope(...)), raw spliced in unparsed", () => {
    const t = storeWithIngest();
    const att = {
      id: t.ids.attachment(),
      mime: "image/png",
      sizeBytes: 3,
      fileName: "f",
      platformRef: "p",
    };
    const [out] = t.ingest({
      source: "device_messenger",
      messages: [
        inbound({ text: 'quote " and ✓', raw: { nested: { a: [1, "x"] }, u: "é" }, attachments: [att] }),
      ],
      cursor: null,
    });
    const row = t.store.messages.get(out?.id as string) as MessageRow;
    const atts = t.store.attachments.forMessage(row.id);
    expect(envelopeJson(row, atts, "http://h:1")).toBe(JSON.stringify(toEnvelope(row, atts, "http://h:1")));
  });
});
