/** Spec sections A (unread), B (single message), C (context), D (mark_read) and F (quarantine), rule by rule. */
import { describe, expect, test } from "bun:test";
import type { Envelope } from "../../src/core/envelope.ts";
import { AGENT, AUTH, inbound, testService } from "../helpers/service.ts";

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const STRANGER = { id: "+15555550999", displayName: "Stranger" };
const GROUP = { id: "chat-guid-group", type: "group" as const, platformRef: "chat-guid-group" };
const EMPTY_ID = "msg_00000000000000000000000000";

type List = { messages: Envelope[]; next_since: string };
type Err = { error: { code: string; details: Record<string, unknown> } };

async function fixture() {
  const t = await testService();
  const ids = t.seed([
    inbound({ timestampMs: T0 + 1000, text: "one" }),
    inbound({ timestampMs: T0 + 2000, sender: STRANGER, text: "stranger" }),
    inbound({ timestampMs: T0 + 3000, direction: "outbound", text: "own" }),
    inbound({ timestampMs: T0 + 4000, channel: GROUP, text: "group" }),
    inbound({ timestampMs: T0 + 5000, text: "five" }),
  ]);
  const discord = t.seed([
    inbound({
      source: "community_chat",
      timestampMs: T0 + 6000,
      sender: { id: "1001", displayName: "ann#1" },
      channel: { id: "community_chat:dm:77", type: "dm", platformRef: "77" },
    }),
  ]);
  const get = async <T>(path: string, headers: Record<string, string> = AGENT) => {
    const res = await t.request("GET", path, { headers });
    return { status: res.status, body: (await res.json()) as T };
  };
  return { ...t, ids: [...ids, ...discord] as string[], get };
}

const f = await fixture();
const [one, stranger, own, group, five, dc] = f.ids as [string, string, string, string, string, string];

describe("A. GET /messages/unread", () => {
  test("allowed inbound messages only, oldest first, as Envelopes", async () => {
    const { status, body } = await f.get<List>("/messages/unread");
    expect(status).toBe(200);
    expect(body.messages.map((m) => m.id)).toEqual([one, group, five, dc]);
    expect(body.next_since).toBe("2026-01-01T12:00:06.000Z");
    expect(body.messages[0]).toMatchObject({
      source: "device_messenger",
      channel_id: "+15555550100",
      channel_type: "dm",
      sender: { id: "+15555550100", display_name: "Ann", person_id: "ann" },
      text: "one",
      attachments: [],
      reply_to: null,
      timestamp: "2026-01-01T12:00:01.000Z",
      direction: "inbound",
    });
  });

  test.each([
    ["?source=community_chat", () => [dc]],
    ["?source=device_messenger&limit=2", () => [one, group]],
    ["?channel_id=chat-guid-group", () => [group]],
    ["?since=2026-01-01T12:00:04Z", () => [five, dc]],
    ["?since=2026-01-01T13:00:04%2B01:00", () => [five, dc]],
    ["?since=2026-01-01T12:00:04.001Z", () => [five, dc]],
    ["?since=2026-01-01T12:00:03.999Z", () => [group, five, dc]],
    ["?limit=1", () => [one]],
    ["?limit=500", () => [one, group, five, dc]],
  ])("filter %s", async (query, expected) => {
    const { body } = await f.get<List>(`/messages/unread${query}`);
    expect(body.messages.map((m) => m.id)).toEqual(expected());
  });

  test("limit defaults to 20 and is clamped to 100", async () => {
    const t = await testService();
    t.seed(Array.from({ length: 130 }, (_, i) => inbound({ timestampMs: T0 + i })));
    const list = async (q: string) =>
      ((await (await t.request("GET", `/messages/unread${q}`, { headers: AGENT })).json()) as List).messages
        .length;
    expect(await list("")).toBe(20);
    expect(await list("?limit=101")).toBe(100);
    expect(await list("?limit=100")).toBe(100);
  });

  test("next_since: echo of since in canonical form when empty, else the empty string", async () => {
    expect((await f.get<List>("/messages/unread?since=2026-01-01T13:00:07%2B01:00")).body).toEqual({
      messages: [],
      next_since: "2026-01-01T12:00:07.000Z",
    });
    expect((await f.get<List>("/messages/unread?channel_id=none")).body).toEqual({
      messages: [],
      next_since: "",
    });
  });

  test.each([
    ["limit=0", "limit"],
    ["limit=-3", "limit"],
    ["limit=abc", "limit"],
    ["limit=1.5", "limit"],
    ["since=yesterday", "since"],
    ["since=2026-01-01", "since"],
    ["source=sms", "source"],
  ])("%s -> 400 VALIDATION_FAILED naming %s", async (query, field) => {
    const { status, body } = await f.get<Err>(`/messages/unread?${query}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
  });

  test("read cursors are per agent", async () => {
    const t = await testService();
    const [a, b] = t.seed([inbound(), inbound()]) as [string, string];
    const unread = async (agent: string) =>
      (
        (await (
          await t.request("GET", "/messages/unread", { headers: { ...AUTH, "x-agent-id": agent } })
        ).json()) as List
      ).messages.map((m) => m.id);
    await t.request("POST", "/messages/mark_read", {
      headers: { ...AUTH, "x-agent-id": "one" },
      body: { message_ids: [a] },
    });
    expect(await unread("one")).toEqual([b]);
    expect(await unread("two")).toEqual([a, b]);
  });
});

describe("B. GET /messages/{message_id}", () => {
  test("an allowed message and an outbound one are returned", async () => {
    expect((await f.get<Envelope>(`/messages/${one}`)).body.text).toBe("one");
    expect((await f.get<Envelope>(`/messages/${own}`)).body).toMatchObject({
      direction: "outbound",
      text: "own",
    });
  });

  test("quarantined and unknown ids are 404 MESSAGE_NOT_FOUND alike", async () => {
    for (const id of [stranger, EMPTY_ID]) {
      const { status, body } = await f.get<Err>(`/messages/${id}`);
      expect(status).toBe(404);
      expect(body.error.code).toBe("MESSAGE_NOT_FOUND");
    }
  });

  test.each(["msg_123", "msg_01arz3ndektsv4rrffq69g5fav", "att_01ARZ3NDEKTSV4RRFFQ69G5FAV", "send"])(
    "bad id format %p is 422 VALIDATION_FAILED",
    async (id) => {
      const { status, body } = await f.get<Err>(`/messages/${id}`);
      expect(status).toBe(422);
      expect(body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "message_id" } });
    },
  );
});

describe("C. GET /messages/context", () => {
  const ctx = (q: string) => f.get<{ messages: Envelope[] } & Err>(`/messages/context?${q}`);

  test("chronological: older, target, newer; allowed and outbound neighbours of the same channel", async () => {
    const { status, body } = await ctx(`channel_id=%2B15555550100&around_message_id=${five}`);
    expect(status).toBe(200);
    expect(body.messages.map((m) => m.id)).toEqual([one, own, five]);
  });

  test("before and after bound the window; defaults are 5", async () => {
    expect(
      (await ctx(`channel_id=%2B15555550100&around_message_id=${five}&before=1`)).body.messages.map(
        (m) => m.id,
      ),
    ).toEqual([own, five]);
    expect(
      (await ctx(`channel_id=%2B15555550100&around_message_id=${one}&before=0&after=0`)).body.messages.map(
        (m) => m.id,
      ),
    ).toEqual([one]);
    expect(
      (await ctx(`channel_id=%2B15555550100&around_message_id=${one}&after=50`)).body.messages.map(
        (m) => m.id,
      ),
    ).toEqual([one, own, five]);
  });

  test.each([
    ["the target is quarantined", () => `channel_id=%2B15555550100&around_message_id=${stranger}`],
    ["the target is outbound", () => `channel_id=%2B15555550100&around_message_id=${own}`],
    ["the target is in another channel", () => `channel_id=chat-guid-group&around_message_id=${five}`],
    ["the target does not exist", () => `channel_id=%2B15555550100&around_message_id=${EMPTY_ID}`],
  ])("404 MESSAGE_NOT_FOUND when %s", async (_why, q) => {
    const { status, body } = await ctx(q());
    expect(status).toBe(404);
    expect(body.error.code).toBe("MESSAGE_NOT_FOUND");
  });

  test.each([
    ["before=51", "before"],
    ["before=-1", "before"],
    ["after=51", "after"],
    ["after=x", "after"],
  ])("%s -> 422 naming %s", async (q, field) => {
    const { status, body } = await ctx(`channel_id=%2B15555550100&around_message_id=${five}&${q}`);
    expect(status).toBe(422);
    expect(body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
  });

  test.each([
    ["channel_id missing", () => `around_message_id=${five}`, "channel_id"],
    ["channel_id empty", () => `channel_id=&around_message_id=${five}`, "channel_id"],
    ["around_message_id missing", () => "channel_id=x", "around_message_id"],
    ["around_message_id malformed", () => "channel_id=x&around_message_id=msg_1", "around_message_id"],
  ])("%s -> 422", async (_why, q, field) => {
    const { status, body } = await ctx(q());
    expect(status).toBe(422);
    expect(body.error.details.field).toBe(field);
  });
});

describe("D. POST /messages/mark_read", () => {
  const mark = (body: unknown, raw?: string) =>
    f.request("POST", "/messages/mark_read", { headers: AGENT, body, raw });

  test("counts unique submitted ids, unknown ids included; an empty list is 0; marking again is a no-op", async () => {
    const t = await testService();
    const [a, b] = t.seed([inbound(), inbound()]) as [string, string];
    const post = async (ids: string[]) =>
      (await (
        await t.request("POST", "/messages/mark_read", { headers: AGENT, body: { message_ids: ids } })
      ).json()) as {
        marked_count: number;
      };
    expect(await post([a, a, EMPTY_ID, "whatever"])).toEqual({ marked_count: 3 });
    expect(await post([])).toEqual({ marked_count: 0 });
    expect(await post([a])).toEqual({ marked_count: 1 });
    const left = (await (await t.request("GET", "/messages/unread", { headers: AGENT })).json()) as List;
    expect(left.messages.map((m) => m.id)).toEqual([b]);
  });

  test.each([
    ["malformed JSON", undefined, "{", "body"],
    ["no body", undefined, "", "body"],
    ["missing message_ids", {}, undefined, "message_ids"],
    ["message_ids not an array", { message_ids: "x" }, undefined, "message_ids"],
    ["an id that is not a string", { message_ids: [1] }, undefined, "message_ids.0"],
    ["a JSON array", [], undefined, "body"],
  ])("%s -> 422 VALIDATION_FAILED", async (_why, body, raw, field) => {
    const res = await mark(body, raw);
    expect(res.status).toBe(422);
    expect(((await res.json()) as Err).error).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { field },
    });
  });
});

describe("F. GET /messages/quarantine", () => {
  test("quarantined messages only, newest first, without X-Agent-ID", async () => {
    const t = await testService();
    const [q1, , q3] = t.seed([
      inbound({ timestampMs: T0 + 1, sender: STRANGER }),
      inbound({ timestampMs: T0 + 2 }),
      inbound({ timestampMs: T0 + 3, sender: STRANGER }),
    ]) as [string, string, string];
    const list = async (q = "") => {
      const res = await t.request("GET", `/messages/quarantine${q}`, { headers: AUTH });
      return { status: res.status, body: (await res.json()) as List & Partial<Err> };
    };
    const all = await list();
    expect(all.status).toBe(200);
    expect(all.body.messages.map((m) => m.id)).toEqual([q3, q1]);
    expect(all.body.messages[0]?.sender).toEqual({
      id: "+15555550999",
      display_name: "Stranger",
      person_id: null,
    });
    expect(all.body.next_since).toBe("2026-01-01T12:00:00.003Z");
    expect((await list("?limit=1")).body.messages.map((m) => m.id)).toEqual([q3]);
    expect((await list("?since=2026-01-01T12:00:00.001Z")).body.messages.map((m) => m.id)).toEqual([q3]);
    expect((await list("?since=2026-01-01T12:00:00.003Z")).body).toEqual({
      messages: [],
      next_since: "2026-01-01T12:00:00.003Z",
    });
    for (const q of ["?limit=0", "?limit=x", "?since=no"]) {
      const bad = await list(q);
      expect(bad.status).toBe(400);
      expect(bad.body.error?.code).toBe("VALIDATION_FAILED");
    }
  });

  test("before (additive) pages back through the whole quarantine, ties included, each message once", async () => {
    const t = await testService();
    // Seven strangers' messages, three of them in one millisecond (a page boundary falls among them).
    const ms = [1, 2, 3, 3, 3, 4, 5];
    const ids = t.seed(ms.map((d) => inbound({ timestampMs: T0 + d, sender: STRANGER }))) as string[];
    t.seed([inbound({ timestampMs: T0 + 6 })]);
    const page = async (q: string) => {
      const res = await t.request("GET", `/messages/quarantine${q}`, { headers: AUTH });
      return { status: res.status, body: (await res.json()) as List & Partial<Err> };
    };
    const seen: string[] = [];
    let before = "";
    for (let guard = 0; guard < 10; guard++) {
      const { body } = await page(`?limit=2${before ? `&before=${before}` : ""}`);
      seen.push(...body.messages.map((m) => m.id));
      if (body.messages.length < 2) break;
      before = body.messages.at(-1)?.id as string;
    }
    // Newest first, ties in reverse arrival, every one once; the spec's `next_since` alone never gets here.
    expect(seen).toEqual([...ids].reverse());
    expect(
      (await page(`?since=2026-01-01T12:00:00.002Z&before=${ids[5]}`)).body.messages.map((m) => m.id),
    ).toEqual(ids.slice(2, 5).reverse());
    for (const q of [
      "?before=msg_nope",
      `?before=${EMPTY_ID}`,
      `?before=${t.seed([inbound({ timestampMs: T0 + 9 })])[0]}`,
    ]) {
      const bad = await page(q);
      expect([bad.status, bad.body.error?.code, bad.body.error?.details.field]).toEqual([
        400,
        "VALIDATION_FAILED",
        "before",
      ]);
    }
  });
});
