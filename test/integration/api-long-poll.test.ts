/**
 * The unread long poll (decisions.md, beyond the spec and additive): `wait` holds an empty answer until
 * a matching allowlisted message is stored, the wait ends, or the service stops; bad values are the
 * route's other query failures (400 VALIDATION_FAILED naming the field). Through the real service.
 */
import { describe, expect, test } from "bun:test";
import { LONG_POLL_MAX_WAITERS } from "../../src/service.ts";
import { inbound } from "../helpers/messages.ts";
import { AGENT, AUTH, testService } from "../helpers/service.ts";

const FRIEND_DM = { id: "+15555550100", type: "dm" as const, platformRef: "any;-;+15555550100" };
const STRANGER = { id: "+15555550199", displayName: "+15555550199" };
const DISCORD_ANN = "1001";
/** Ann's message `text` in Discord channel 77 (she is allowlisted there). */
const fromDiscord = (text: string) =>
  inbound({
    source: "community_chat",
    channel: { id: "community_chat:channel:77", type: "group", platformRef: "77" },
    sender: { id: DISCORD_ANN, displayName: "ann" },
    text,
  });

type Page = { messages: { id: string; text: string; channel_id: string }[]; next_since: string };
const page = async (res: Promise<Response>) => {
  const r = await res;
  expect(r.status).toBe(200);
  return (await r.json()) as Page;
};
/** A held request: settles only when the service answers it. */
function hold(t: Awaited<ReturnType<typeof testService>>, query: string, headers = AGENT) {
  let settled = false;
  const answer = t.request("GET", `/messages/unread?${query}`, { headers }).finally(() => {
    settled = true;
  });
  return { answer, settled: () => settled };
}
/** Lets the held requests reach their wait (a few turns of the event loop). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe("GET /messages/unread?wait=", () => {
  test("answers at once when unread messages exist", async () => {
    const t = await testService();
    t.seed([inbound({ text: "already here" })]);
    const t0 = performance.now();
    const p = await page(t.request("GET", "/messages/unread?wait=30", { headers: AGENT }));
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(p.messages.map((m) => m.text)).toEqual(["already here"]);
  });

  test("wakes when an allowlisted iMessage or Discord message is stored", async () => {
    const t = await testService();
    const held = hold(t, "wait=30");
    await turns();
    expect(held.settled()).toBe(false);
    t.seed([inbound({ text: "hi from the phone" })]);
    expect((await page(held.answer)).messages.map((m) => m.text)).toEqual(["hi from the phone"]);

    const discord = hold(t, "wait=30&source=community_chat");
    await turns();
    t.seed([fromDiscord("hi from discord")]);
    expect((await page(discord.answer)).messages.map((m) => m.text)).toEqual(["hi from discord"]);
  });

  test("ignores quarantined senders and messages outside its filters", async () => {
    const t = await testService();
    const held = hold(t, `wait=30&channel_id=${encodeURIComponent(FRIEND_DM.id)}`);
    await turns();
    t.seed([inbound({ sender: STRANGER, channel: { ...FRIEND_DM, id: STRANGER.id }, text: "spam" })]);
    t.seed([fromDiscord("another channel")]);
    await turns();
    expect(held.settled()).toBe(false);
    t.seed([inbound({ text: "for this channel" })]);
    expect((await page(held.answer)).messages.map((m) => m.text)).toEqual(["for this channel"]);
  });

  test("a message older than `since` does not end the wait", async () => {
    const t = await testService();
    const held = hold(t, "wait=30&since=2026-01-01T00:10:00Z");
    await turns();
    t.seed([inbound({ text: "old", timestampMs: Date.UTC(2026, 0, 1, 0, 5) })]);
    await turns();
    expect(held.settled()).toBe(false);
    t.seed([inbound({ text: "new", timestampMs: Date.UTC(2026, 0, 1, 0, 15) })]);
    expect((await page(held.answer)).messages.map((m) => m.text)).toEqual(["new"]);
  });

  test("times out with the empty page (next_since echoes since)", async () => {
    const t = await testService();
    const t0 = performance.now();
    const p = await page(
      t.request("GET", "/messages/unread?wait=1&since=2026-01-01T00:00:00%2B01:00", { headers: AGENT }),
    );
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
    expect(p).toEqual({ messages: [], next_since: "2025-12-31T23:00:00.000Z" });
  });

  test("many waiters are answered by one message, each for its own agent", async () => {
    const t = await testService();
    const agents = Array.from({ length: 50 }, (_, i) => `agent-${i}`);
    const held = agents.map((a) => hold(t, "wait=30", { ...AUTH, "x-agent-id": a }));
    await turns();
    expect(t.svc.arrivals.waiting()).toBe(50);
    t.seed([inbound({ text: "for everyone" })]);
    const pages = await Promise.all(held.map((h) => page(h.answer)));
    expect(pages.every((p) => p.messages.length === 1 && p.messages[0]?.text === "for everyone")).toBe(true);
    expect(t.svc.arrivals.waiting()).toBe(0);
  });

  test(`at most ${LONG_POLL_MAX_WAITERS} are held; the next one answers 503 SERVICE_BUSY at once`, async () => {
    const t = await testService();
    const held = Array.from({ length: LONG_POLL_MAX_WAITERS }, () => hold(t, "wait=60"));
    await turns(10);
    expect(t.svc.arrivals.waiting()).toBe(LONG_POLL_MAX_WAITERS);
    const t0 = performance.now();
    const busy = await t.request("GET", "/messages/unread?wait=60", { headers: AGENT });
    expect(busy.status).toBe(503);
    expect(busy.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(await busy.json()).toMatchObject({ error: { code: "SERVICE_BUSY" } });
    expect(performance.now() - t0).toBeLessThan(1000);
    // More in api-long-poll-busy.test.ts.
    t.svc.endLongPolls();
    await Promise.all(held.map((h) => h.answer));
  });

  test("stopping the service answers every held request with the empty page", async () => {
    const t = await testService();
    const held = [hold(t, "wait=60"), hold(t, "wait=60&source=community_chat")];
    await turns();
    t.svc.endLongPolls();
    for (const h of held) expect(await page(h.answer)).toEqual({ messages: [], next_since: "" });
    const after = await page(t.request("GET", "/messages/unread?wait=60", { headers: AGENT }));
    expect(after.messages).toEqual([]);
  });

  test("a client that goes away gives its place back", async () => {
    const t = await testService();
    const abort = new AbortController();
    const gone = t.svc.app.handle(
      new Request("http://localhost/messages/unread?wait=60", { headers: AGENT, signal: abort.signal }),
    );
    await turns();
    expect(t.svc.arrivals.waiting()).toBe(1);
    abort.abort();
    await gone.catch(() => undefined);
    await turns();
    expect(t.svc.arrivals.waiting()).toBe(0);
  });

  test.each(["-1", "61", "x", "1.5", ""])("wait=%p is 400 VALIDATION_FAILED naming wait", async (value) => {
    const t = await testService();
    const res = await t.request("GET", `/messages/unread?wait=${value}`, { headers: AGENT });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { code: "VALIDATION_FAILED", details: { field: "wait" } },
    });
  });

  test("the OpenAPI document describes wait", async () => {
    const t = await testService();
    const doc = (await (await t.request("GET", "/openapi.json", { headers: AUTH })).json()) as {
      paths: Record<string, { get: { parameters: { name: string; schema: Record<string, unknown> }[] } }>;
    };
    const wait = doc.paths["/messages/unread"]?.get.parameters.find((p) => p.name === "wait");
    expect(wait?.schema).toMatchObject({ minimum: 0, maximum: 60, default: 0 });
    expect(String(wait?.schema.description)).toContain("Long poll");
  });
});
