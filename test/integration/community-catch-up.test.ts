/**
 * Catch-up after downtime reaches channels gw has not stored yet, end to end with the real discord.js
 * and the fake Discord: a first DM from an allowlisted person (its DM opened with POST
 * /users/@me/channels), new guild channels and threads readable by the bot, all from the moment gw was
 * last connected; quiet channels (their `last_message_id` not newer) and channels the bot cannot read
 * cost no history request; a stranger's DM is never opened. Beyond the bound the newest messages are
 * kept and the skipped ones counted in the log; the first start imports nothing. The connected mark
 * never passes a message received but not stored, also at a clean stop.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import type { FakeUser } from "../../src/demo/fake-discord/server.ts";
import { allowBob } from "../helpers/allowlist.ts";
import { allowAnn, communityService, unreadTexts, waitUnreadTexts } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";

const discord = fakeDiscords();

const HOUR = 3_600_000;

async function world(opts: Parameters<typeof communityService>[1] = {}) {
  const { fake, ann, guild, general } = await discord.home();
  const bob = fake.user({ username: "bob_user", global_name: "Bob" });
  const stranger = fake.user({ username: "stranger" });
  const allowlist = `${allowAnn(ann.id)}${allowBob(bob.id)}`;
  const gw = await communityService(fake, { allowlist, ...opts });
  const texts = () => unreadTexts(gw);
  const waitTexts = (n: number) => waitUnreadTexts(gw, n);
  /** Every session logs one "Discord catch-up done" when its catch-up has finished. */
  const sessionsCaughtUp = (n: number) =>
    waitFor(
      () => (gw.log.entries.filter((e) => e.msg === "Discord catch-up done").length >= n ? true : undefined),
      `${n} finished catch-ups`,
    );
  const say = (author: FakeUser, channelId: string, content: string, more: { at?: number } = {}) =>
    fake.message(channelId, { author, content, dispatch: false, ...more });
  return { fake, gw, ann, bob, stranger, guild, general, texts, waitTexts, sessionsCaughtUp, say };
}

type World = Awaited<ReturnType<typeof world>>;
const requestsOf = (w: World) => ({
  history: () =>
    w.fake.requests
      .filter((r) => r.method === "GET" && /^\/channels\/\d+\/messages$/.test(r.path))
      .map((r) => r.path.split("/")[2] as string),
  dmOpens: () =>
    w.fake.requests
      .filter((r) => r.method === "POST" && r.path === "/users/@me/channels")
      .map((r) => (r.body as { recipient_id: string }).recipient_id),
});

describe("direct messages", () => {
  test("a first DM from an allowlisted person, written while gw was stopped, is stored after the restart; a stranger's is not fetched", async () => {
    const w = await world();
    await w.sessionsCaughtUp(1);
    const requests = requestsOf(w);
    let bobDm = "";
    let strangerDm = "";
    await w.gw.restart(() => {
      bobDm = w.fake.dm(w.bob).id;
      w.say(w.bob, bobDm, "bob's first DM, while gw was down");
      strangerDm = w.fake.dm(w.stranger).id;
      w.say(w.stranger, strangerDm, "a stranger's first DM");
    });
    expect(await w.waitTexts(1)).toEqual(["bob's first DM, while gw was down"]);
    await w.sessionsCaughtUp(2);
    // Only allowlisted people's DMs are opened; the stranger's DM is never asked for.
    expect(new Set(requests.dmOpens())).toEqual(new Set([w.ann.id, w.bob.id]));
    expect(requests.history()).not.toContain(strangerDm);
    expect(w.gw.svc.store.channels.get(`community_chat:dm:${strangerDm}`)).toBeNull();
    // Ann's DM exists but holds nothing new: opened, never read.
    expect(requests.history()).toEqual([bobDm]);
    const position = w.gw.svc.store.channels.get(`community_chat:dm:${bobDm}`)?.cursor;
    expect(position).toBe(w.fake.history(bobDm).at(-1)?.id as string);
  });

  test("a DM that could not be opened is opened again later: degraded meanwhile, and the mark waits", async () => {
    // No margin and a fast refresh: only the pending DM holds the mark back.
    const w = await world({ tuning: { catchUpRetryMs: 1_000, markMarginMs: 0, markEveryMs: 50 } });
    await w.sessionsCaughtUp(1);
    const mark = () => BigInt(w.gw.svc.store.cursors.get("community_chat")?.position ?? "0");
    let bobDm = "";
    let posted = 0n;
    await w.gw.restart(() => {
      bobDm = w.fake.dm(w.bob).id;
      posted = BigInt(w.say(w.bob, bobDm, "while Discord could not open DMs").id as string);
      // Both attempts of the first opening fail (restRetries 1), for each of the two people.
      w.fake.fail({ method: "POST", path: "/users/@me/channels", status: 500, times: 4 });
    }, "degraded");
    expect((await w.gw.health()).detail).toStartWith("Could not fetch what 2 channel(s) missed");
    // Until the DM is fetched, the mark never passes it (heartbeats go on meanwhile).
    await waitFor(async () => {
      const stored = (await w.texts()).length > 0;
      if (!stored) expect(mark()).toBeLessThan(posted);
      return stored ? true : undefined;
    }, "the DM, once opened");
    expect(await w.texts()).toEqual(["while Discord could not open DMs"]);
    await w.gw.untilState("ok");
    await waitFor(() => (mark() > posted ? true : undefined), "the mark to move on");
  });

  test("the first start imports no history: a DM written before gw ever ran is not fetched", async () => {
    const fake = await discord.start();
    const ann = fake.user({ username: "ann_user", global_name: "Ann" });
    fake.guild({ name: "Home" });
    const dm = fake.dm(ann);
    fake.message(dm.id, { author: ann, content: "before gw ever ran", dispatch: false });
    const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
    await waitFor(
      () => (gw.log.entries.some((e) => e.msg === "Discord catch-up done") ? true : undefined),
      "the first catch-up",
    );
    expect(fake.requests.filter((r) => r.method === "GET" && r.path.endsWith("/messages"))).toEqual([]);
    expect(gw.svc.store.channels.ofSource("community_chat")).toEqual([]);
  });
});

describe("guild channels and threads", () => {
  test("new channels and threads written while gw was down are caught up; quiet and unreadable ones are not asked", async () => {
    const w = await world();
    const requests = requestsOf(w);
    const old = w.fake.channel(w.guild.id, { name: "old" });
    w.say(w.ann, old.id, "an hour before gw started", { at: Date.now() - HOUR });
    const empty = w.fake.channel(w.guild.id, { name: "empty" });
    w.fake.message(w.general.id, { author: w.ann, content: "before" });
    expect(await w.waitTexts(1)).toEqual(["before"]);
    await w.sessionsCaughtUp(1);
    const made = { fresh: "", thread: "", private: "", hidden: "", noHistory: "" };
    await w.gw.restart(() => {
      made.fresh = w.fake.channel(w.guild.id, { name: "fresh" }).id;
      w.say(w.ann, made.fresh, "in a new channel");
      made.thread = w.fake.thread(w.guild.id, w.general.id, { name: "plans" }).id;
      w.say(w.ann, made.thread, "in a new thread");
      made.private = w.fake.channel(w.guild.id, { name: "private", access: "private" }).id;
      w.say(w.ann, made.private, "in a private channel the bot was let into");
      made.hidden = w.fake.channel(w.guild.id, { name: "hidden", access: "hidden" }).id;
      w.say(w.ann, made.hidden, "where the bot cannot look");
      made.noHistory = w.fake.channel(w.guild.id, { name: "no-history", access: "no-history" }).id;
      w.say(w.ann, made.noHistory, "where the bot may not read history");
      w.say(w.stranger, made.fresh, "a stranger in the new channel");
    });
    // (Posted within a millisecond or two: compared as a set.)
    expect((await w.waitTexts(4)).sort()).toEqual([
      "before",
      "in a new channel",
      "in a new thread",
      "in a private channel the bot was let into",
    ]);
    await w.sessionsCaughtUp(2);
    expect(await w.texts()).toHaveLength(4);
    // A stranger's message in a guild channel is caught up too, quarantined (as it would be live).
    const quarantined = w.gw.svc.store.db
      .query("SELECT text, allowlist_status FROM messages WHERE sender_id = ?1")
      .all(w.stranger.id);
    expect(quarantined).toEqual([{ text: "a stranger in the new channel", allowlist_status: "unknown" }]);
    // One history request per channel with something new; none for general (nothing new), the old,
    // empty, hidden and history-less channels.
    expect(new Set(requests.history())).toEqual(new Set([made.fresh, made.thread, made.private]));
    expect(requests.history()).toHaveLength(3);
    for (const id of [made.fresh, made.thread, made.private])
      expect(w.gw.svc.store.channels.get(`community_chat:channel:${id}`)?.cursor).toBe(
        w.fake.history(id).at(-1)?.id as string,
      );
    expect(old.id && empty.id).toBeTruthy();
  });
});

describe("bounds", () => {
  test("more missed than the bound: the newest are stored, in order, and the skipped ones are counted in the log", async () => {
    const now = Date.now();
    const w = await world({
      env: { GW_COMMUNITY_CATCHUP_MAX_MESSAGES: "3", GW_COMMUNITY_CATCHUP_MAX_AGE_HOURS: "24" },
    });
    w.fake.message(w.general.id, { author: w.ann, content: "seen" });
    expect(await w.waitTexts(1)).toEqual(["seen"]);
    let fresh = "";
    await w.gw.restart(() => {
      w.say(w.ann, w.general.id, "30 h ago", { at: now - 30 * HOUR });
      for (let i = 1; i <= 5; i++) w.say(w.ann, w.general.id, `known ${i}`);
      fresh = w.fake.channel(w.guild.id, { name: "fresh" }).id;
      for (let i = 1; i <= 4; i++) w.say(w.ann, fresh, `new ${i}`);
    });
    await w.sessionsCaughtUp(2);
    const texts = await w.texts();
    expect(texts.filter((t) => t.startsWith("known"))).toEqual(["known 3", "known 4", "known 5"]);
    expect(texts.filter((t) => t.startsWith("new"))).toEqual(["new 2", "new 3", "new 4"]);
    expect(texts).toHaveLength(7);
    const bound = w.gw.log.entries.filter((e) => e.msg.startsWith("catch-up bound reached"));
    expect(bound.map((e) => e.obj)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          channel_id: `community_chat:channel:${w.general.id}`,
          kept: 3,
          skipped: 2,
        }),
        expect.objectContaining({ channel_id: `community_chat:channel:${fresh}`, kept: 3, skipped: 1 }),
      ]),
    );
    // Stored oldest first (ids grow in commit order), and each channel's position is its newest message.
    const stored = w.gw.svc.store.db
      .query("SELECT text FROM messages WHERE channel_id = ?1 ORDER BY id")
      .all(`community_chat:channel:${w.general.id}`);
    expect(stored).toEqual([{ text: "seen" }, { text: "known 3" }, { text: "known 4" }, { text: "known 5" }]);
    for (const id of [w.general.id, fresh])
      expect(w.gw.svc.store.channels.get(`community_chat:channel:${id}`)?.cursor).toBe(
        w.fake.history(id).at(-1)?.id as string,
      );
  });
});

describe("the connected mark", () => {
  test("never passes a message not yet stored: one that could not be stored before a stop is fetched at the next start", async () => {
    // No margin and a fast refresh: only the message still on its way to the store holds the mark back.
    const w = await world({ tuning: { markMarginMs: 0, markEveryMs: 50, ingestRetryMaxMs: 50 } });
    const store = () => w.gw.svc.store;
    const mark = () => store().cursors.get("community_chat")?.position ?? null;
    await waitFor(() => mark() ?? undefined, "a first mark");
    store().db.run(
      "CREATE TRIGGER full_disk BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    const fresh = w.fake.channel(w.guild.id, { name: "fresh" });
    const stuck = w.fake.message(fresh.id, { author: w.ann, content: "could not be stored" }).id as string;
    const justBefore = (BigInt(stuck) - 1n).toString();
    // Heartbeats keep being acknowledged: without the message, the mark would move past it.
    await waitFor(() => (mark() === justBefore ? true : undefined), "the mark to stop before the message");
    await w.gw.restart(() => {
      // Stopped: what the stop stored, read from the file.
      const db = new Database(w.gw.env.GW_DB_PATH as string);
      try {
        const row = db.query("SELECT position FROM connector_cursors WHERE source = 'community_chat'").get();
        expect(row).toEqual({ position: justBefore });
        db.run("DROP TRIGGER full_disk");
      } finally {
        db.close();
      }
    });
    expect(await w.waitTexts(1)).toEqual(["could not be stored"]);
    await waitFor(
      () => (BigInt(mark() ?? "0") > BigInt(stuck) ? true : undefined),
      "the mark to move on once it is stored",
    );
  });
});
