/**
 * GET /messages/search (extensions.md §2) through the real app and store: visible messages only (allowed,
 * outbound; never quarantined or deleted), the current text after edits applied through ingest, filters,
 * limit, ranking, envelopes as the other routes build them, and the errors.
 */
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { AGENT, AUTH, inbound, testService } from "../helpers/service.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const STRANGER = { id: "+15555550999", displayName: "Stranger" };
const GROUP = { id: "chat-guid-group", type: "group" as const, platformRef: "chat-guid-group" };
const DISCORD = {
  source: "community_chat" as const,
  sender: { id: "1001", displayName: "ann#1" },
  channel: { id: "community_chat:dm:77", type: "dm" as const, platformRef: "77" },
};

type Page = { messages: Envelope[] };
type Change =
  | { kind: "edit"; targetPlatformId: string; text: string }
  | { kind: "delete"; targetPlatformId: string };
type Err = { error: { code: string; message: string; details: Record<string, unknown> } };

async function world() {
  const t = await testService();
  const store = (ms: NormalizedMessage[]) => t.seed(ms) as string[];
  const change = (c: Change) =>
    t.svc.ingest({
      source: "device_messenger",
      messages: [],
      cursor: null,
      changes: [{ source: "device_messenger", timestampMs: T0, dedupeKey: crypto.randomUUID(), ...c }],
    });
  const search = async (query: string, headers: Record<string, string> = AGENT) => {
    const res = await t.request("GET", `/messages/search${query}`, { headers });
    return { status: res.status, body: (await res.json()) as Page & Err };
  };
  const ids = async (query: string) => (await search(query)).body.messages.map((m) => m.id);
  return { ...t, store, change, search, ids };
}

const w = await world();
const allowed = inbound({ timestampMs: T0 + 1000, text: "Dinner at the Café tonight?" });
const quarantined = inbound({ timestampMs: T0 + 2000, sender: STRANGER, text: "dinner scam tonight" });
const outbound = inbound({ timestampMs: T0 + 3000, direction: "outbound", text: "dinner sounds good" });
const group = inbound({ timestampMs: T0 + 4000, channel: GROUP, text: "group dinner plans, dinner!" });
const [aId, qId, oId, gId] = w.store([allowed, quarantined, outbound, group]) as [
  string,
  string,
  string,
  string,
];
const [dId] = w.store([inbound({ ...DISCORD, timestampMs: T0 + 5000, text: "dinner on discord" })]) as [
  string,
];

describe("GET /messages/search", () => {
  test("finds allowed and outbound messages, never quarantined ones, as Envelopes", async () => {
    const { status, body } = await w.search("?q=dinner");
    expect(status).toBe(200);
    expect(body.messages.map((m) => m.id).sort()).toEqual([aId, oId, gId, dId].sort());
    expect(await w.ids("?q=scam")).toEqual([]);
    const env = body.messages.find((m) => m.id === aId);
    const single = await w.request("GET", `/messages/${aId}`, { headers: AGENT });
    expect(env).toEqual((await single.json()) as Envelope);
  });

  test("words, not syntax: case, accents and punctuation fold; every word must match", async () => {
    expect(await w.ids("?q=CAFE")).toEqual([aId]);
    expect(await w.ids(`?q=${encodeURIComponent('"café" *tonight*')}`)).toEqual([aId]);
    expect(await w.ids("?q=dinner%20tonight")).toEqual([aId]);
    expect(await w.ids("?q=dinner%20OR%20scam")).toEqual([]);
    expect(await w.ids("?q=din")).toEqual([]);
  });

  test("a q with no words answers no messages", async () => {
    for (const q of ["***", "%22%22", "-", "%F0%9F%98%80", "%20%20"]) {
      expect(await w.search(`?q=${q}`)).toEqual({ status: 200, body: { messages: [] } as never });
    }
  });

  test("best match first (bm25), ties newest first", async () => {
    expect((await w.ids("?q=dinner"))[0]).toBe(gId);
    const t = await world();
    const [older, newer, best] = t.store([
      inbound({ timestampMs: T0 + 1, text: "ranking alpha one" }),
      inbound({ timestampMs: T0 + 2, text: "ranking alpha two" }),
      inbound({ timestampMs: T0, text: "ranking ranking" }),
    ]) as [string, string, string];
    expect(await t.ids("?q=ranking")).toEqual([best, newer, older]);
  });

  test("filters: source and channel_id; limit", async () => {
    expect(await w.ids("?q=dinner&source=community_chat")).toEqual([dId]);
    expect(await w.ids("?q=dinner&channel_id=chat-guid-group")).toEqual([gId]);
    expect(await w.ids("?q=dinner&channel_id=chat-guid-group&source=community_chat")).toEqual([]);
    expect(await w.ids("?q=dinner&channel_id=nowhere")).toEqual([]);
    expect(await w.ids("?q=dinner&limit=2")).toHaveLength(2);
    const t = await world();
    t.store(Array.from({ length: 30 }, (_, i) => inbound({ timestampMs: T0 + i, text: `many ${i}` })));
    expect(await t.ids("?q=many")).toHaveLength(20);
    expect(await t.ids("?q=many&limit=100")).toHaveLength(30);
  });

  test("an edit applied through ingest is found by its new text, not the old; a delete by nothing", async () => {
    const t = await world();
    const m = inbound({ timestampMs: T0, text: "original wording" });
    const id = t.store([m])[0] as string;
    t.change({ kind: "edit", targetPlatformId: m.platformId, text: "revised wording" });
    expect(await t.ids("?q=original")).toEqual([]);
    expect(await t.ids("?q=revised")).toEqual([id]);
    expect((await t.search("?q=wording")).body.messages[0]?.text).toBe("revised wording");
    t.change({ kind: "delete", targetPlatformId: m.platformId });
    expect(await t.ids("?q=revised")).toEqual([]);
    expect(await t.ids("?q=wording")).toEqual([]);
  });

  test("a message sent through POST /messages/send is found at once (the outbound record's own write)", async () => {
    const t = await world();
    t.store([inbound({ timestampMs: T0, text: "hello" })]);
    const sent = await t.request("POST", "/messages/send", {
      headers: AUTH,
      body: { channel_id: "+15555550100", text: "parcel tracking number" },
    });
    const { message_id } = (await sent.json()) as { message_id: string };
    const found = (await t.search("?q=parcel")).body.messages;
    expect(found.map((m) => [m.id, m.direction])).toEqual([[message_id, "outbound"]]);
  });

  test.each([
    ["q", ""],
    ["q", "?q="],
    ["q", `?q=${"a".repeat(201)}`],
    ["limit", "?q=x&limit=0"],
    ["limit", "?q=x&limit=101"],
    ["limit", "?q=x&limit=two"],
    ["source", "?q=x&source=sms"],
  ])("bad %s (%s): 400 VALIDATION_FAILED naming it", async (field, query) => {
    const res = await w.search(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "VALIDATION_FAILED", details: { field } } });
  });

  test("200 characters of q are accepted", async () => {
    expect((await w.search(`?q=${"dinner ".repeat(28)}dinn`)).status).toBe(200);
  });

  test("no bearer: 401; no X-Agent-ID: 400 AGENT_ID_REQUIRED", async () => {
    expect((await w.search("?q=dinner", {})).status).toBe(401);
    const res = await w.search("?q=dinner", AUTH);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe("AGENT_ID_REQUIRED");
  });

  test("quarantined messages stay unfound whatever the query", async () => {
    expect(qId).toBeString();
    for (const q of ["dinner scam tonight", "scam", "tonight"]) {
      const found = await w.ids(`?q=${encodeURIComponent(q)}`);
      expect(found).not.toContain(qId);
    }
  });
});
