/**
 * Delivering events (extensions.md §1): GET /events (cursor, paging, validation, X-Agent-ID, the long
 * poll), event webhooks with GW_WEBHOOK_EVENTS and `X-GW-Event` (signed and retried like messages), and
 * nothing new with the default setting.
 */
import { afterAll, describe, expect, test } from "bun:test";
import type { GwEvent } from "../../src/core/event.ts";
import { systemClock } from "../../src/core/ports.ts";
import type { NormalizedChange } from "../../src/ingest/changes.ts";
import { verifyGwSignature } from "../../src/webhooks/sign.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH, inbound, testService } from "../helpers/service.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const FRIEND = { id: "+15555550100", displayName: "+15555550100" };
const sinks: { stop(): unknown }[] = [];
afterAll(() => {
  for (const s of sinks) s.stop();
});

async function world(env: Record<string, string> = {}) {
  const t = await testService({ clock: systemClock, env });
  const change = (...changes: NormalizedChange[]) =>
    t.svc.ingest({ source: "device_messenger", messages: [], cursor: null, changes });
  const edit = (platformId: string, text: string, key = `edit:${text}`): NormalizedChange => ({
    kind: "edit",
    source: "device_messenger",
    targetPlatformId: platformId,
    text,
    timestampMs: Date.now(),
    dedupeKey: key,
  });
  const get = async (query: string, headers: Record<string, string> = AGENT) => {
    const res = await t.request("GET", `/events${query}`, { headers });
    return { status: res.status, body: (await res.json()) as { events: GwEvent[]; next_since: string } };
  };
  return { ...t, change, edit, get };
}

describe("GET /events", () => {
  test("oldest first after a cursor, paged, next_since the last id or the cursor echoed", async () => {
    const w = await world();
    const m = inbound({ text: "v0" });
    w.seed([m]);
    w.change(w.edit(m.platformId, "v1"), w.edit(m.platformId, "v2"), w.edit(m.platformId, "v3"));
    const all = await w.get("");
    expect(all.status).toBe(200);
    expect(all.body.events.map((e) => e.data.text)).toEqual(["v1", "v2", "v3"]);
    const [e1, e2, e3] = all.body.events as [GwEvent, GwEvent, GwEvent];
    expect(all.body.next_since).toBe(e3.id);
    const page = await w.get(`?since=${e1.id}&limit=1`);
    expect(page.body).toEqual({ events: [e2], next_since: e2.id });
    expect((await w.get(`?since=${e3.id}`)).body).toEqual({ events: [], next_since: e3.id });
    expect((await w.get("?since=")).body.events).toHaveLength(3);
  });

  test.each([
    ["since", "?since=msg_01ARZ3NDEKTSV4RRFFQ69G5FAV"],
    ["since", "?since=evt_x"],
    ["limit", "?limit=0"],
    ["limit", "?limit=101"],
    ["wait", "?wait=61"],
    ["wait", "?wait=-1"],
  ])("bad %s (%s): 400 VALIDATION_FAILED naming it", async (field, query) => {
    const w = await world();
    const res = await w.get(query);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "VALIDATION_FAILED", details: { field } } });
  });

  test("no X-Agent-ID: 400 AGENT_ID_REQUIRED; no bearer: 401", async () => {
    const w = await world();
    expect((await w.get("", AUTH)).body).toMatchObject({ error: { code: "AGENT_ID_REQUIRED" } });
    expect((await w.get("", {})).status).toBe(401);
  });

  test("wait holds an empty answer until an event is stored, and answers with it", async () => {
    const w = await world();
    const m = inbound({ text: "before" });
    w.seed([m]);
    const t0 = performance.now();
    const held = w.get("?wait=10");
    await waitFor(() => (w.svc.eventArrivals.waiting() === 1 ? true : undefined), "the held request");
    w.change(w.edit(m.platformId, "after"));
    const res = await held;
    expect(res.body.events.map((e) => e.kind)).toEqual(["message.edited"]);
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe("event webhooks", () => {
  async function withSink(events: string | null) {
    const sink = webhookSink(() => 204);
    sinks.push(sink);
    const w = await world({
      GW_WEBHOOK_URL: sink.url,
      GW_WEBHOOK_SECRET: SECRET,
      ...(events === null ? {} : { GW_WEBHOOK_EVENTS: events }),
    });
    return { ...w, sink };
  }

  test("GW_WEBHOOK_EVENTS=all: the event is POSTed signed with X-GW-Event, messages say `message`", async () => {
    const w = await withSink("all");
    const m = inbound({ text: "hi" });
    w.seed([m]);
    w.change(w.edit(m.platformId, "hi!"), {
      kind: "reaction",
      source: "device_messenger",
      targetPlatformId: m.platformId,
      emoji: "👍",
      added: true,
      reactor: FRIEND,
      service: "iMessage",
      byOwner: false,
      timestampMs: Date.now(),
      dedupeKey: "r1",
    });
    await waitFor(() => (w.sink.hits.length === 3 ? true : undefined), "three deliveries");
    const byKind = Object.fromEntries(w.sink.hits.map((h) => [h.headers["x-gw-event"], h]));
    expect(Object.keys(byKind).sort()).toEqual(["message", "message.edited", "reaction.added"]);
    const reaction = byKind["reaction.added"];
    expect(JSON.parse(reaction?.body ?? "{}")).toMatchObject({
      kind: "reaction.added",
      data: { emoji: "👍" },
    });
    expect(verifyGwSignature(SECRET, reaction?.body ?? "", reaction?.headers["x-gw-signature"] ?? null)).toBe(
      true,
    );
    const events = (await w.get("")).body.events;
    expect(JSON.parse(byKind["message.edited"]?.body ?? "{}")).toEqual(events[0] as GwEvent);
  });

  test("only the kinds listed; without `message`, messages are not pushed", async () => {
    const w = await withSink("reaction.removed");
    const m = inbound({ text: "hi" });
    w.seed([m]);
    w.change(w.edit(m.platformId, "edited"));
    expect(w.svc.store.db.query("SELECT COUNT(*) AS n FROM webhook_deliveries").get()).toEqual({ n: 0 });
  });

  test("the default pushes messages only, without X-GW-Event", async () => {
    const w = await withSink(null);
    const m = inbound({ text: "hi" });
    w.seed([m]);
    w.change(w.edit(m.platformId, "edited"));
    await waitFor(() => (w.sink.hits.length === 1 ? true : undefined), "the message delivery");
    expect(w.sink.hits[0]?.headers["x-gw-event"]).toBeUndefined();
    expect(w.svc.store.db.query("SELECT COUNT(*) AS n FROM webhook_deliveries").get()).toEqual({ n: 1 });
  });
});
