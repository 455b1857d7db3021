/** Spec section E (POST /messages/send): every behaviour rule, attachment rule and error row. */
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RecordingConnector } from "../fakes/recording-connector.ts";
import { AGENT, AUTH, inbound, testService } from "../helpers/service.ts";

const DM = "+15555550100";
const DISCORD = { id: "community_chat:channel:42", type: "group" as const, platformRef: "42" };
type Err = { error: { code: string; message: string; details: Record<string, unknown> } };

async function setup(env: Record<string, string> = {}) {
  const t = await testService({ env });
  const [seen] = t.seed([inbound()]) as [string];
  const [seenDiscord] = t.seed([
    inbound({ source: "community_chat", channel: DISCORD, sender: { id: "1001", displayName: "ann" } }),
  ]) as [string];
  const device = t.connectors.device_messenger as RecordingConnector;
  const discord = t.connectors.community_chat as RecordingConnector;
  const send = async (body: unknown, headers: Record<string, string> = {}, raw?: string) => {
    const res = await t.request("POST", "/messages/send", { headers: { ...AUTH, ...headers }, body, raw });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      text,
      body: JSON.parse(text) as Record<string, unknown> & Err,
    };
  };
  return { ...t, seen, seenDiscord, device, discord, send };
}

describe("sending", () => {
  test("stores one outbound record and returns its id and send time", async () => {
    const s = await setup();
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
    const s = await setup();
    expect((await s.send({ channel_id: DISCORD.id, text: "to discord" })).status).toBe(200);
    expect(s.discord.sends.map((x) => x.channel.id)).toEqual([DISCORD.id]);
    expect(s.device.sends).toEqual([]);
  });

  test("empty text is allowed", async () => {
    const s = await setup();
    expect((await s.send({ channel_id: DM, text: "" })).status).toBe(200);
  });

  test.each([
    ["a channel never seen", "+15555550111"],
    ["a community channel never seen", "community_chat:channel:9"],
    ["a device channel spelled as a community one", `community_chat:${DM}`],
  ])("404 CHANNEL_NOT_FOUND for %s", async (_why, channel) => {
    const s = await setup();
    const r = await s.send({ channel_id: channel, text: "x" });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: "CHANNEL_NOT_FOUND", details: { field: "channel_id" } });
    expect(s.device.sends.length + s.discord.sends.length).toBe(0);
  });

  test("a channel seen only through the owner's own messages is not known", async () => {
    const s = await setup();
    s.seed([
      inbound({ direction: "outbound", channel: { id: "+15555550122", type: "dm", platformRef: "x" } }),
    ]);
    expect((await s.send({ channel_id: "+15555550122", text: "x" })).status).toBe(404);
  });

  test("reply_to must be a message of the same channel", async () => {
    const s = await setup();
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
    const s = await setup();
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
    const s = await setup();
    const r = await s.send(body, {}, raw);
    expect(r.status).toBe(status);
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
    expect(s.device.sends).toHaveLength(0);
  });

  test("text of exactly 20,000 characters is accepted", async () => {
    const s = await setup();
    expect((await s.send({ channel_id: DM, text: "é".repeat(20_000) })).status).toBe(200);
  });
});

describe("rate limit", () => {
  test("burst then 429 with an integer Retry-After and the envelope; refills with time; per channel", async () => {
    const s = await setup({ GW_RATE_LIMIT_BURST: "3", GW_RATE_LIMIT_PER_CHANNEL_RPS: "0.5" });
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
    const s = await setup({ GW_RATE_LIMIT_BURST: "1" });
    await s.send({ channel_id: DM, text: "x", attachments: [{ url: "http://elsewhere.example/file.png" }] });
    await s.send({ channel_id: DM, text: "x", reply_to: "msg_00000000000000000000000000" });
    expect((await s.send({ channel_id: DM, text: "x" })).status).toBe(200);
  });
});

describe("Idempotency-Key", () => {
  test("a replay returns the first response byte for byte, with the same headers, and sends once", async () => {
    const s = await setup();
    const first = await s.send({ channel_id: DM, text: "once" }, { "idempotency-key": "k-1" });
    s.clock.advance(5000);
    const again = await s.send({ text: "once", channel_id: DM }, { "idempotency-key": "k-1" });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect([...again.headers].sort()).toEqual([...first.headers].sort());
    expect(s.device.sends).toHaveLength(1);
  });

  test("the same key with a different body is 422 IDEMPOTENCY_KEY_REUSE", async () => {
    const s = await setup();
    await s.send({ channel_id: DM, text: "once" }, { "idempotency-key": "k-2" });
    const r = await s.send({ channel_id: DM, text: "twice" }, { "idempotency-key": "k-2" });
    expect(r.status).toBe(422);
    expect(r.body.error.code).toBe("IDEMPOTENCY_KEY_REUSE");
    expect(s.device.sends).toHaveLength(1);
  });

  test("a concurrent duplicate waits for the first and gets the same response", async () => {
    const s = await setup();
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
    const s = await setup({ GW_RATE_LIMIT_BURST: "1", GW_RATE_LIMIT_PER_CHANNEL_RPS: "1" });
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
    const s = await setup({ GW_IDEMPOTENCY_TTL_HOURS: "1" });
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
    const s = await setup();
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
    const s = await setup();
    const r = await s.send({ channel_id: DM, text: "x" }, { "idempotency-key": "k".repeat(256) });
    expect(r.status).toBe(400);
    expect(r.body.error.details.field).toBe("idempotency-key");
  });
});

describe("attachments", () => {
  async function withStoredAttachment() {
    const s = await setup();
    const id = s.svc.sweeper
      ? (await import("../../src/core/ids.ts")).createIdFactory(s.clock).attachment()
      : "";
    mkdirSync(s.config.attachmentDir, { recursive: true });
    writeFileSync(join(s.config.attachmentDir, id), "PNGDATA");
    s.seed([
      inbound({ attachments: [{ id, mime: "image/png", sizeBytes: 7, fileName: id, platformRef: null }] }),
    ]);
    return { ...s, attachmentId: id };
  }

  test.each([
    [`/attachments/ATT`],
    [`http://127.0.0.1:8080/attachments/ATT`],
    [`https://gw.local/attachments/ATT`],
  ])("an adapter-hosted url %s resolves to the stored bytes", async (url) => {
    const s = await withStoredAttachment();
    const r = await s.send({
      channel_id: DM,
      text: "look",
      attachments: [{ url: url.replace("ATT", s.attachmentId) }],
    });
    expect(r.status).toBe(200);
    expect(s.device.sends[0]?.attachment).toEqual({
      path: join(s.config.attachmentDir, s.attachmentId),
      mime: "image/png",
    });
  });

  test("only the first attachment is sent; the rest are dropped with a warning", async () => {
    const s = await withStoredAttachment();
    const url = `/attachments/${s.attachmentId}`;
    expect(
      (await s.send({ channel_id: DM, text: "x", attachments: [{ url, mime: "image/x-hint" }, { url }] }))
        .status,
    ).toBe(200);
    expect(s.device.sends[0]?.attachment?.mime).toBe("image/x-hint");
    expect(
      s.log.entries.some((e) => e.level === "warn" && e.msg === "only the first attachment is sent"),
    ).toBe(true);
  });

  test.each([
    ["neither url nor path", [{}], "attachments.0", "exactly_one_of_url_or_path"],
    [
      "both url and path",
      [{ url: "/attachments/x", path: "/tmp/x" }],
      "attachments.0",
      "exactly_one_of_url_or_path",
    ],
    ["a foreign url", [{ url: "https://example.com/a.png" }], "attachments.0.url", "adapter_hosted_url"],
    [
      "an attachment url with a bad id",
      [{ url: "/attachments/att_123" }],
      "attachments.0.url",
      "adapter_hosted_url",
    ],
    [
      "a url with a query",
      [{ url: "/attachments/att_01ARZ3NDEKTSV4RRFFQ69G5FAV?x=1" }],
      "attachments.0.url",
      "adapter_hosted_url",
    ],
    ["a relative path", [{ path: "photo.png" }], "attachments.0.path", "absolute_path"],
    ["a bad second item", [{ path: "/tmp/x" }, { url: "nope" }], "attachments.1.url", "adapter_hosted_url"],
  ])("%s -> 400 naming the field and rule", async (_why, attachments, field, rule) => {
    const s = await setup();
    const r = await s.send({ channel_id: DM, text: "x", attachments });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { field, rule } });
  });

  test("an unknown or retention-deleted attachment is 404 MESSAGE_NOT_FOUND", async () => {
    const s = await withStoredAttachment();
    const unknown = await s.send({
      channel_id: DM,
      text: "x",
      attachments: [{ url: "/attachments/att_01ARZ3NDEKTSV4RRFFQ69G5FAV" }],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("MESSAGE_NOT_FOUND");
    s.svc.store.attachments.clearFile(s.attachmentId);
    const swept = await s.send({
      channel_id: DM,
      text: "x",
      attachments: [{ url: `/attachments/${s.attachmentId}` }],
    });
    expect(swept.status).toBe(404);
    expect(s.device.sends).toHaveLength(0);
  });

  test("any attachment to a community channel is 413", async () => {
    const s = await withStoredAttachment();
    const r = await s.send({
      channel_id: DISCORD.id,
      text: "x",
      attachments: [{ url: `/attachments/${s.attachmentId}` }],
    });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("ATTACHMENT_TOO_LARGE_FOR_PLATFORM");
    expect(s.discord.sends).toHaveLength(0);
  });
});

describe("local path rules", () => {
  async function withFiles() {
    const s = await setup({ GW_ATTACHMENT_MAX_BYTES: "100" });
    const home = s.dir; // HOME of the test service
    const ok = join(home, "Documents/ok.txt");
    mkdirSync(join(home, "Documents"), { recursive: true });
    writeFileSync(ok, "fine");
    for (const d of [".ssh", ".ssh-public", ".aws", "Library/Messages"])
      mkdirSync(join(home, d), { recursive: true });
    writeFileSync(join(home, ".ssh/id_ed25519"), "SECRET");
    writeFileSync(join(home, ".ssh-public/key.pub"), "public");
    writeFileSync(join(home, "Documents/big.bin"), "x".repeat(101));
    symlinkSync(join(home, ".ssh/id_ed25519"), join(home, "Documents/innocent.txt"));
    Bun.spawnSync(["mkfifo", join(home, "Documents/fifo")]);
    return { ...s, home, ok };
  }

  test("an ordinary readable file is sent by its real path", async () => {
    const s = await withFiles();
    const r = await s.send({ channel_id: DM, text: "x", attachments: [{ path: s.ok }] });
    expect(r.status).toBe(200);
    expect(s.device.sends[0]?.attachment?.path).toBe(s.ok);
  });

  test("a sibling directory that shares a denied prefix is allowed", async () => {
    const s = await withFiles();
    expect(
      (
        await s.send({
          channel_id: DM,
          text: "x",
          attachments: [{ path: join(s.home, ".ssh-public/key.pub") }],
        })
      ).status,
    ).toBe(200);
  });

  test.each([
    ["a key in ~/.ssh", (h: string) => join(h, ".ssh/id_ed25519"), "denied_location"],
    ["a traversal into ~/.ssh", (h: string) => join(h, "Documents/../.ssh/id_ed25519"), "denied_location"],
    ["a symlink to ~/.ssh", (h: string) => join(h, "Documents/innocent.txt"), "denied_location"],
    ["the directory ~/.aws itself", (h: string) => join(h, ".aws"), "denied_location"],
    ["gw's own database", (h: string) => join(h, "data/gw.db"), "denied_location"],
    ["gw's allowlist", (h: string) => join(h, "allowlist.toml"), "denied_location"],
    ["a directory", (h: string) => join(h, "Documents"), "not_regular_file"],
    ["a FIFO", (h: string) => join(h, "Documents/fifo"), "not_regular_file"],
    ["/dev/zero", () => "/dev/zero", "not_regular_file"],
    ["a missing file", (h: string) => join(h, "Documents/missing.txt"), "file_not_found"],
    ["a file over the size cap", (h: string) => join(h, "Documents/big.bin"), "too_large"],
    ["a path with a NUL byte", (h: string) => `${join(h, "Documents/ok.txt")}\u0000.png`, "absolute_path"],
  ])("%s is refused with 400", async (_why, path, rule) => {
    const s = await withFiles();
    const r = await s.send({ channel_id: DM, text: "x", attachments: [{ path: path(s.home) }] });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: "VALIDATION_FAILED", details: { rule } });
    expect(s.device.sends).toHaveLength(0);
  });

  test("GW_SEND_PATH_ROOTS confines paths to its directories", async () => {
    const dir = (await setup()).dir;
    const s = await setup({ GW_SEND_PATH_ROOTS: join(dir, "outbox") });
    mkdirSync(join(dir, "outbox"), { recursive: true });
    writeFileSync(join(dir, "outbox/a.txt"), "a");
    writeFileSync(join(dir, "elsewhere.txt"), "b");
    expect(
      (await s.send({ channel_id: DM, text: "x", attachments: [{ path: join(dir, "outbox/a.txt") }] }))
        .status,
    ).toBe(200);
    const r = await s.send({
      channel_id: DM,
      text: "x",
      attachments: [{ path: join(dir, "elsewhere.txt") }],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.details.rule).toBe("outside_send_roots");
  });
});
