/**
 * Spec section E (POST /messages/send): sending and routing, body validation, the rate limit and the
 * Idempotency-Key rules, every error row of theirs. Attachments and local path rules:
 * api-send-attachments.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { DISCORD, DM, type Err, sendSetup } from "../helpers/send.ts";
import { AGENT, AUTH, inbound, testService } from "../helpers/service.ts";

describe("sending", () => {
  test("stores one outbound record and returns its id and send time", async () => {
    const s = await sendSetup();
    const r = await s.send({ channel_id: DM, text: "hi there", reply_to: s.seen });
    expect(r.status).toBe(200);
    expect(r.body as unknown).toEqual({
      message_id: expect.stringMatching(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/),
      sent_at: new Date(s.clock.now()).toISOString(),
    });
    expect(s.device.sends).toHaveLength(1);
    expect(s.device.sends[0]).toMatchObject({
      text: "hi there",
      channel: { id: DM, type: "dm", platformRef: "any;-;+15555550100" },
      attachment: null,
    });
    expect(s.device.sends[0]?.replyTo?.id).toBe(s.seen);
    const row = s.svc.store.messages.get(r.body.message_id as string);
    expect(row).toMatchObject({
      direction: "outbound",
      allowlist_status: "outbound",
      reply_to: s.seen,
      platform_id: "sent-1",
      text: "hi there",
    });
    const unread = (await (
      await s.request("GET", "/messages/unread?channel_id=%2B15555550100", { headers: AGENT })
    ).json()) as { messages: { id: string }[] };
    expect(unread.messages.map((m) => m.id)).toEqual([s.seen]);
    const ctx = (await (
      await s.request("GET", `/messages/context?channel_id=%2B15555550100&around_message_id=${s.seen}`, {
        headers: AGENT,
      })
    ).json()) as { messages: { id: string }[] };
    expect(ctx.messages.map((m) => m.id)).toEqual([s.seen, r.body.message_id as string]);
  });

  test("routes by the community_chat: prefix", async () => {
    const s = await sendSetup();
    expect((await s.send({ channel_id: DISCORD.id, text: "to discord" })).status).toBe(200);
    expect(s.discord.sends.map((x) => x.channel.id)).toEqual([DISCORD.id]);
    expect(s.device.sends).toEqual([]);
  });

  test("empty text is allowed", async () => {
    const s = await sendSetup();
    expect((await s.send({ channel_id: DM, text: "" })).status).toBe(200);
  });

  test.each([
    ["a channel never seen", "+15555550111"],
    ["a community channel never seen", "community_chat:channel:9"],
    ["a device channel spelled as a community one", `community_chat:${DM}`],
  ])("404 CHANNEL_NOT_FOUND for %s", async (_why, channel) => {
    const s = await sendSetup();
    const r = await s.send({ channel_id: channel, text: "x" });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: "CHANNEL_NOT_FOUND", details: { field: "channel_id" } });
    expect(s.device.sends.length + s.discord.sends.length).toBe(0);
  });

  test("a channel seen only through the owner's own messages is not known", async () => {
    const s = await sendSetup();
    s.seed([
      inbound({ direction: "outbound", channel: { id: "+15555550122", type: "dm", platformRef: "x" } }),
    ]);
    expect((await s.send({ channel_id: "+15555550122", text: "x" })).status).toBe(404);
  });

  test("reply_to must be a message of the same channel", async () => {
    const s = await sendSetup();
    for (const reply_to of [s.seenDiscord, "msg_00000000000000000000000000"]) {
      const r = await s.send({ channel_id: DM, text: "x", reply_to });
      expect(r.status).toBe(404);
      expect(r.body.error).toMatchObject({ code: "MESSAGE_NOT_FOUND", details: { field: "reply_to" } });
    }
    expect((await s.send({ channel_id: DM, text: "x", reply_to: null })).status).toBe(200);
  });

  test.each([
    ["PLATFORM_AUTH", 502],
    ["PLATFORM_SEND_FAILED", 502],
  ] as const)("a connector's %s is %i with the envelope, and no outbound record", async (code, status) => {
    const s = await sendSetup();
    s.device.failNext(code);
    const r = await s.send({ channel_id: DM, text: "x" });
    expect(r.status).toBe(status);
    expect(r.body.error.code).toBe(code);
    expect(
      s.svc.store.db.query("SELECT COUNT(*) AS n FROM messages WHERE direction = 'outbound'").get(),
    ).toEqual({ n: 0 });
  });

  test("a source whose connector is not running is 502 PLATFORM_SEND_FAILED", async () => {
    const t = await testService({ connectors: {} });
    t.seed([inbound()]);
    const res = await t.request("POST", "/messages/send", {
      headers: AUTH,
      body: { channel_id: DM, text: "x" },
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as Err).error.code).toBe("PLATFORM_SEND_FAILED");
  });
});

describe("body validation", () => {
  test.each([
    ["malformed JSON", undefined, "{", 422, "body"],
    ["missing channel_id", { text: "x" }, undefined, 422, "channel_id"],
    ["empty channel_id", { channel_id: "", text: "x" }, undefined, 422, "channel_id"],
    ["missing text", { channel_id: DM }, undefined, 422, "text"],
    ["text not a string", { channel_id: DM, text: 5 }, undefined, 422, "text"],
    ["reply_to not a message id", { channel_id: DM, text: "x", reply_to: "m1" }, undefined, 422, "reply_to"],
    ["text over 20,000 characters", { channel_id: DM, text: "x".repeat(20_001) }, undefined, 400, "text"],
    [
      "attachments not an array",
      { channel_id: DM, text: "x", attachments: "x" },
      undefined,
      400,
      "attachments",
    ],
    [
      "an attachment that is not an object",
      { channel_id: DM, text: "x", attachments: [5] },
      undefined,
      400,
      "attachments.0",
    ],
    [
      "an attachment url that is not a string",
      { channel_id: DM, text: "x", attachments: [{ url: 5 }] },
      undefined,
      400,
      "attachments.0.url",
    ],
  ])("%s -> %i naming %s", async (_why, body, raw, status, field) => {
    const s = await sendSetup();
    const r = await s.send(body, {}, raw);
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
    expect(s.device.sends).toHaveLength(0);
  });

  test("text of exactly 20,000 characters is accepted", async () => {
    const s = await sendSetup();
    expect((await s.send({ channel_id: DM, text: "é".repeat(20_000) })).status).toBe(200);
  });
});

describe("rate limit", () => {
  test("burst then 429 with an integer Retry-After and the envelope; refills with time; per channel", async () => {
    const s = await sendSetup({ GW_RATE_LIMIT_BURST: "3", GW_RATE_LIMIT_PER_CHANNEL_RPS: "0.5" });
    for (let i = 0; i < 3; i++) expect((await s.send({ channel_id: DM, text: `${i}` })).status).toBe(200);
    const limited = await s.send({ channel_id: DM, text: "over" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(limited.body.error).toMatchObject({ code: "RATE_LIMITED", details: { retry_after_s: 2 } });
    expect((await s.send({ channel_id: DISCORD.id, text: "other channel" })).status).toBe(200);
    s.clock.advance(1999);
    expect((await s.send({ channel_id: DM, text: "still early" })).status).toBe(429);
    s.clock.advance(1);
    expect((await s.send({ channel_id: DM, text: "refilled" })).status).toBe(200);
    expect(s.device.sends).toHaveLength(4);
  });

  test("a refused request (unknown channel, bad attachment) spends no token", async () => {
    const s = await sendSetup({ GW_RATE_LIMIT_BURST: "1" });
    await s.send({ channel_id: DM, text: "x", attachments: [{ url: "http://elsewhere.example/file.png" }] });
    await s.send({ channel_id: DM, text: "x", reply_to: "msg_00000000000000000000000000" });
    expect((await s.send({ channel_id: DM, text: "x" })).status).toBe(200);
  });
});

describe("Idempotency-Key", () => {
  test("a replay returns the first response byte for byte, with the same headers, and sends once", async () => {
    const s = await sendSetup();
    const first = await s.send({ channel_id: DM, text: "once" }, { "idempotency-key": "k-1" });
    s.clock.advance(5000);
    const again = await s.send({ text: "once", channel_id: DM }, { "idempotency-key": "k-1" });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect([...again.headers].sort()).toEqual([...first.headers].sort());
    expect(s.device.sends).toHaveLength(1);
  });

  test("the same key with a different body is 422 IDEMPOTENCY_KEY_REUSE", async () => {
    const s = await sendSetup();
    await s.send({ channel_id: DM, text: "once" }, { "idempotency-key": "k-2" });
    const r = await s.send({ channel_id: DM, text: "twice" }, { "idempotency-key": "k-2" });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect(s.device.sends).toHaveLength(1);
  });

  test("a concurrent duplicate waits for the first and gets the same response", async () => {
    const s = await sendSetup();
    const release = s.device.holdNext();
    const a = s.send({ channel_id: DM, text: "slow" }, { "idempotency-key": "k-3" });
    const b = s.send({ channel_id: DM, text: "slow" }, { "idempotency-key": "k-3" });
    const c = s.send({ channel_id: DM, text: "other" }, { "idempotency-key": "k-3" });
    expect((await c).body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.status).toBe(200);
    expect(rb.text).toBe(ra.text);
    expect(s.device.sends).toHaveLength(1);
  });

  test("platform 502s are remembered; validation failures, unknown channels and 429s are not", async () => {
    const s = await sendSetup({ GW_RATE_LIMIT_BURST: "1", GW_RATE_LIMIT_PER_CHANNEL_RPS: "1" });
    s.device.failNext("PLATFORM_SEND_FAILED");
    const failed = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-502" });
    const replay = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-502" });
    expect([failed.status, replay.status]).toEqual([502, 502]);
    expect(replay.text).toBe(failed.text);
    expect(s.device.sends).toHaveLength(1);

    expect((await s.send({ channel_id: DM, text: 5 }, { "idempotency-key": "k-v" })).status).toBe(422);
    expect(
      (await s.send({ channel_id: "+15555550111", text: "x" }, { "idempotency-key": "k-c" })).status,
    ).toBe(404);
    expect((await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-r" })).status).toBe(429);
    s.clock.advance(1000);
    expect((await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-r" })).status).toBe(200);
    s.clock.advance(1000);
    expect((await s.send({ channel_id: DM, text: 5 }, { "idempotency-key": "k-v" })).status).toBe(422);
    s.seed([inbound({ channel: { id: "+15555550111", type: "dm", platformRef: "p" } })]);
    expect(
      (await s.send({ channel_id: "+15555550111", text: "x" }, { "idempotency-key": "k-c" })).status,
    ).toBe(200);
  });

  test("keys expire after GW_IDEMPOTENCY_TTL_HOURS", async () => {
    const s = await sendSetup({ GW_IDEMPOTENCY_TTL_HOURS: "1" });
    const first = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-ttl" });
    s.clock.advance(3_599_999);
    expect((await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-ttl" })).text).toBe(
      first.text,
    );
    s.clock.advance(1);
    const later = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-ttl" });
    expect(later.body.message_id).not.toBe(first.body.message_id);
    expect(s.device.sends).toHaveLength(2);
    expect(s.svc.idempotency.purgeExpired()).toBe(0);
    s.clock.advance(3_600_000);
    expect(s.svc.idempotency.purgeExpired()).toBe(1);
  });

  test("a key left in flight by a crash is never re-sent: 502 with reason outcome_unknown", async () => {
    const s = await sendSetup();
    s.svc.store.idempotency.begin(
      "POST /messages/send",
      "k-crash",
      "x",
      s.clock.now(),
      s.clock.now() + 60_000,
    );
    // The crashed request's body hash is unknown here; a replay with any body must not send.
    s.svc.store.db.run("UPDATE idempotency_keys SET body_hash = ?1 WHERE key = 'k-crash'", [
      (await import("../../src/send/idempotency.ts")).bodyHash({ channel_id: DM, text: "x" }),
    ]);
    const r = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k-crash" });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({
      code: "PLATFORM_SEND_FAILED",
      details: { reason: "outcome_unknown" },
    });
    expect(s.device.sends).toHaveLength(0);
  });

  test("an over-long key is 400 VALIDATION_FAILED", async () => {
    const s = await sendSetup();
    const r = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k".repeat(256) });
    expect(r.status).toBe(400);
    expect(r.body.error.details.field).toBe("idempotency-key");
  });
});
