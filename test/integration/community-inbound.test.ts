/**
 * The Discord connector end to end, inbound: the real service and the real discord.js client against
 * the fake Discord. Guild channels, threads and DMs become envelopes with every field; the bot's own
 * messages are ignored; attachments are re-hosted (and a dead link or an oversize file is left out);
 * the allowlist classifies community senders and links one person across sources.
 */
import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import type { CommunityTuning } from "../../src/connectors/community-chat/connector.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH } from "../helpers/service.ts";

const discord = fakeDiscords();

async function world(
  opts: {
    allowlist?: (annId: string) => string;
    env?: Record<string, string>;
    tuning?: Partial<CommunityTuning>;
  } = {},
) {
  const fake = await discord.start();
  const ann = fake.user({ username: "ann_user", global_name: "Ann Global" });
  const stranger = fake.user({ username: "stranger", global_name: null });
  const guild = fake.guild({ name: "Home" });
  const general = fake.channel(guild.id, { name: "general" });
  const thread = fake.thread(guild.id, general.id, { name: "plans" });
  const dm = fake.dm(ann);
  const gw = await communityService(fake, {
    allowlist: (opts.allowlist ?? allowAnn)(ann.id),
    ...(opts.env ? { env: opts.env } : {}),
    ...(opts.tuning ? { tuning: opts.tuning } : {}),
  });
  const unread = async (query = "") => {
    const res = await gw.request("GET", `/messages/unread?limit=100${query}`, { headers: AGENT });
    return ((await res.json()) as { messages: Envelope[] }).messages;
  };
  const waitUnread = (n: number, query = "") =>
    waitFor(async () => {
      const list = await unread(query);
      return list.length >= n ? list : undefined;
    }, `${n} unread messages`);
  return { fake, gw, ann, stranger, guild, general, thread, dm, unread, waitUnread };
}

describe("inbound", () => {
  test("guild channel, thread and DM messages become envelopes with every field", async () => {
    const w = await world();
    const inGeneral = w.fake.message(w.general.id, { author: w.ann, content: "hello all", nick: "Annie" });
    const inThread = w.fake.message(w.thread.id, { author: w.ann, content: "in the thread", nick: null });
    const inDm = w.fake.message(w.dm.id, { author: w.ann, content: "just us" });
    const list = await w.waitUnread(3);
    const byText = Object.fromEntries(list.map((m) => [m.text, m]));

    expect(byText["hello all"]).toMatchObject({
      source: "community_chat",
      channel_id: `community_chat:channel:${w.general.id}`,
      channel_type: "group",
      sender: { id: w.ann.id, display_name: "Annie", person_id: "ann" },
      attachments: [],
      reply_to: null,
      direction: "inbound",
      timestamp: new Date(snowflakeMs(inGeneral.id as string)).toISOString(),
    });
    expect(byText["hello all"]?.raw).toMatchObject({
      id: inGeneral.id,
      guild_id: w.guild.id,
      content: "hello all",
    });
    expect(byText["in the thread"]).toMatchObject({
      channel_id: `community_chat:channel:${w.thread.id}`,
      channel_type: "group",
      sender: { display_name: "Ann Global" },
    });
    expect(byText["in the thread"]?.raw).toMatchObject({ id: inThread.id });
    expect(byText["just us"]).toMatchObject({
      channel_id: `community_chat:dm:${w.dm.id}`,
      channel_type: "dm",
      sender: { id: w.ann.id, display_name: "Ann Global", person_id: "ann" },
    });
    expect(byText["just us"]?.raw).toMatchObject({ id: inDm.id });
  });

  test("a reply points at the stored original; a reply to something never stored has reply_to null", async () => {
    const w = await world();
    const first = w.fake.message(w.general.id, { author: w.ann, content: "first" });
    const [stored] = await w.waitUnread(1);
    w.fake.message(w.general.id, { author: w.ann, content: "re: first", replyTo: first.id as string });
    const old = w.fake.message(w.general.id, { author: w.ann, content: "never seen", dispatch: false });
    w.fake.message(w.general.id, { author: w.ann, content: "re: unseen", replyTo: old.id as string });
    const list = await w.waitUnread(3);
    expect(list.find((m) => m.text === "re: first")?.reply_to).toBe(stored?.id as string);
    expect(list.find((m) => m.text === "re: unseen")?.reply_to).toBeNull();
  });

  test("the bot's own messages and system messages are not ingested", async () => {
    const w = await world();
    w.fake.message(w.general.id, { author: w.fake.bot, content: "I am the bot" });
    w.fake.message(w.general.id, { author: w.ann, content: "", type: 7 });
    w.fake.message(w.general.id, { author: w.ann, content: "after them" });
    const list = await w.waitUnread(1);
    expect(list.map((m) => m.text)).toEqual(["after them"]);
    const count = w.gw.svc.store.db.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number };
    expect(count.n).toBe(1);
  });

  test("attachments are re-hosted; a dead link and an oversize file are left out with a warning", async () => {
    const w = await world({ env: { GW_ATTACHMENT_MAX_BYTES: "1000" } });
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    w.fake.message(w.general.id, {
      author: w.ann,
      content: "files",
      attachments: [
        { filename: "photo.png", contentType: "image/png", data: png },
        { filename: "gone.txt", contentType: "text/plain", data: "bye", expired: true },
        { filename: "big.bin", contentType: "application/octet-stream", data: "x".repeat(2000) },
      ],
    });
    const [m] = await w.waitUnread(1);
    expect(m?.attachments).toHaveLength(1);
    const att = m?.attachments[0];
    expect(att).toMatchObject({ mime: "image/png", size_bytes: png.byteLength });
    expect(att?.url).toEndWith(`/attachments/${att?.id}`);
    const res = await w.gw.request("GET", `/attachments/${att?.id}`, { headers: AUTH });
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(png);
    expect(w.fake.cdnHits.some((p) => p.includes("big.bin"))).toBe(false);
    const warnings = w.gw.log.entries.filter((e) => e.msg.startsWith("Discord attachment not re-hosted"));
    expect(warnings.map((e) => (e.obj as { reason: string }).reason).sort()).toEqual(
      [expect.stringContaining("larger than 1000 bytes"), expect.stringContaining("answered 404")].sort(),
    );
  });

  test("an attachment-only message is delivered with empty text", async () => {
    const w = await world();
    w.fake.message(w.dm.id, {
      author: w.ann,
      attachments: [{ filename: "a.txt", contentType: "text/plain", data: "A" }],
    });
    const [m] = await w.waitUnread(1);
    expect(m).toMatchObject({ text: "", attachments: [{ mime: "text/plain", size_bytes: 1 }] });
  });
});

describe("store failures", () => {
  test("a message that cannot be stored is retried until it can: degraded meanwhile, nothing lost or reordered", async () => {
    const w = await world({ tuning: { ingestRetryMaxMs: 50 } });
    w.gw.svc.store.db.run(
      "CREATE TRIGGER full_disk BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    w.fake.message(w.general.id, { author: w.ann, content: "first" });
    w.fake.message(w.general.id, { author: w.ann, content: "second" });
    await w.gw.untilState("degraded");
    expect((await w.gw.health()).detail).toContain("database or disk is full");
    expect(await w.unread()).toEqual([]);
    w.gw.svc.store.db.run("DROP TRIGGER full_disk");
    expect((await w.waitUnread(2)).map((m) => m.text)).toEqual(["first", "second"]);
    await w.gw.untilState("ok");
  });
});

describe("webhooks", () => {
  test("an allowed message is pushed as a signed webhook; a quarantined one is not", async () => {
    const sink = webhookSink();
    try {
      const w = await world({ env: { GW_WEBHOOK_URL: sink.url, GW_WEBHOOK_SECRET: "whsec-test" } });
      w.fake.message(w.general.id, { author: w.stranger, content: "stranger" });
      w.fake.message(w.general.id, { author: w.ann, content: "pushed" });
      const hit = await waitFor(() => sink.hits[0], "a webhook delivery");
      const envelope = JSON.parse(hit.body) as Envelope;
      expect(envelope).toMatchObject({
        text: "pushed",
        source: "community_chat",
        sender: { person_id: "ann" },
      });
      expect(hit.headers["x-gw-signature"]).toBe(
        `sha256=${createHmac("sha256", "whsec-test").update(hit.body).digest("hex")}`,
      );
      await Bun.sleep(100);
      expect(sink.hits).toHaveLength(1);
    } finally {
      sink.stop();
    }
  });
});

describe("allowlist", () => {
  test("an unlisted sender is quarantined; a listed one is allowed and linked to the same person as on iMessage", async () => {
    const w = await world();
    w.fake.message(w.general.id, { author: w.stranger, content: "let me in" });
    w.fake.message(w.general.id, { author: w.ann, content: "it's me" });
    const [allowed] = await w.waitUnread(1);
    expect(allowed).toMatchObject({ text: "it's me", sender: { person_id: "ann" } });
    const q = await waitFor(async () => {
      const res = await w.gw.request("GET", "/messages/quarantine", { headers: AUTH });
      const { messages } = (await res.json()) as { messages: Envelope[] };
      return messages.length > 0 ? messages : undefined;
    }, "a quarantined message");
    expect(q[0]).toMatchObject({
      text: "let me in",
      sender: { id: w.stranger.id, display_name: "stranger", person_id: null },
    });
    expect((await w.unread()).map((m) => m.text)).toEqual(["it's me"]);
    const links = w.gw.svc.store.db
      .query("SELECT source FROM identity_links WHERE person_id = 'ann' ORDER BY source")
      .all();
    expect(links).toEqual([{ source: "community_chat" }, { source: "device_messenger" }]);
  });
});

function snowflakeMs(id: string): number {
  return Number(BigInt(id) >> 22n) + 1_420_070_400_000;
}
