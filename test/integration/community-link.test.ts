/**
 * The Discord connector's link to the gateway, end to end with the real discord.js and the fake
 * Discord: nothing lost or duplicated across a stop (catch-up from each channel's position, within its
 * bounds: the newest N), op 7, close 4000, a dropped socket and a lost session; health states for a rejected token,
 * refused intents, a login that hangs and a zombie connection, while the API keeps serving; and a clean
 * gateway close on stop.
 */
import { afterEach, describe, expect, test } from "bun:test";
import type { FakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { allowAnn, communityService, unreadTexts, waitUnreadTexts } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT } from "../helpers/service.ts";

const discord = fakeDiscords();
const servers: { stop(force?: boolean): unknown }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) s.stop(true);
});

async function world(opts: Parameters<typeof communityService>[1] = {}, fakeOpts = {}) {
  const { fake, ann, guild, general } = await discord.home(fakeOpts);
  const dm = fake.dm(ann);
  const gw = await communityService(fake, { allowlist: allowAnn(ann.id), ...opts });
  const texts = () => unreadTexts(gw);
  const waitTexts = (n: number) => waitUnreadTexts(gw, n);
  const say = (channelId: string, content: string, more: { dispatch?: boolean; at?: number } = {}) =>
    fake.message(channelId, { author: ann, content, ...more });
  return { fake, gw, ann, guild, general, dm, texts, waitTexts, say };
}

/** Lets a few event-loop turns pass so that anything wrongly delivered twice would have shown up. */
const settle = () => Bun.sleep(150);

describe("no loss across downtime", () => {
  test("messages posted while gw was stopped are fetched at start, oldest first, exactly once", async () => {
    const w = await world();
    w.say(w.general.id, "before");
    w.say(w.dm.id, "dm before");
    await w.waitTexts(2);
    await w.gw.restart(() => {
      w.say(w.general.id, "while down 1", { dispatch: false });
      w.fake.message(w.general.id, { author: w.fake.bot, content: "bot's own", dispatch: false });
      w.say(w.general.id, "while down 2", { dispatch: false });
      w.say(w.dm.id, "dm while down", { dispatch: false });
    });
    w.say(w.general.id, "after");
    // In order within each channel (posts in two channels within one millisecond have no order).
    const all = await w.waitTexts(6);
    expect(all.filter((t) => !t.startsWith("dm"))).toEqual([
      "before",
      "while down 1",
      "while down 2",
      "after",
    ]);
    expect(all.filter((t) => t.startsWith("dm"))).toEqual(["dm before", "dm while down"]);
    await settle();
    expect(await w.texts()).toHaveLength(6);
    // One page of history for each of the two channels with something new.
    const history = w.fake.requests.filter((r) => r.method === "GET" && r.path.endsWith("/messages"));
    expect(history.map((r) => r.path).sort()).toEqual(
      [`/channels/${w.general.id}/messages`, `/channels/${w.dm.id}/messages`].sort(),
    );
  });

  test("catch-up keeps to its bounds: the newest N missed per channel, none older than the age limit", async () => {
    const now = Date.now();
    const w = await world({
      env: { GW_COMMUNITY_CATCHUP_MAX_MESSAGES: "3", GW_COMMUNITY_CATCHUP_MAX_AGE_HOURS: "24" },
    });
    w.say(w.general.id, "two days ago", { at: now - 48 * 3_600_000 });
    w.say(w.dm.id, "dm seen", {});
    await w.waitTexts(2);
    await w.gw.restart(() => {
      w.say(w.general.id, "30 h ago", { dispatch: false, at: now - 30 * 3_600_000 });
      for (let i = 1; i <= 5; i++) w.say(w.general.id, `recent ${i}`, { dispatch: false });
    });
    expect(await w.waitTexts(5)).toEqual(["two days ago", "dm seen", "recent 3", "recent 4", "recent 5"]);
    await settle();
    expect(await w.texts()).toHaveLength(5);
    const bound = w.gw.log.entries.filter((e) => e.msg.startsWith("catch-up bound reached"));
    expect(bound.map((e) => e.obj)).toEqual([expect.objectContaining({ kept: 3, skipped: 2 })]);
  });
});

describe("catch-up failures", () => {
  test("a channel whose catch-up failed keeps its position until a retry fills the gap", async () => {
    const w = await world({ tuning: { catchUpRetryMs: 1_000 } });
    w.say(w.general.id, "before");
    await w.waitTexts(1);
    await w.gw.restart(() => {
      w.say(w.general.id, "missed", { dispatch: false });
      // Both attempts of the first catch-up fail (restRetries 1).
      w.fake.fail({ method: "GET", path: `/channels/${w.general.id}/messages`, status: 500, times: 2 });
    }, "degraded");
    w.say(w.general.id, "live after the failure");
    expect(await w.waitTexts(2)).toEqual(["before", "live after the failure"]);
    expect((await w.gw.health()).detail).toStartWith("Could not fetch what 1 channel(s) missed");
    expect(await w.waitTexts(3)).toEqual(["before", "missed", "live after the failure"]);
    await settle();
    expect(await w.texts()).toHaveLength(3);
    await w.gw.untilState("ok");
    const position = w.gw.svc.store.channels.get(`community_chat:channel:${w.general.id}`)?.cursor;
    expect(position).toBe(w.fake.history(w.general.id).at(-1)?.id as string);
  });
});

describe("reconnects", () => {
  test.each([
    ["op 7 RECONNECT", (f: FakeDiscord) => f.gateway.reconnect()],
    ["close 4000", (f: FakeDiscord) => f.gateway.close(4000, "Unknown error")],
    ["a dropped socket", (f: FakeDiscord) => f.gateway.drop()],
  ])("%s: the session resumes, what was sent meanwhile is replayed, nothing twice", async (_what, cut) => {
    const w = await world();
    w.say(w.general.id, "one");
    await w.waitTexts(1);
    cut(w.fake);
    w.say(w.general.id, "two");
    w.say(w.dm.id, "three");
    expect(await w.waitTexts(3)).toEqual(["one", "two", "three"]);
    await waitFor(() => (w.fake.gateway.resumes > 0 ? true : undefined), "a RESUME");
    await w.gw.untilState("ok");
    w.say(w.general.id, "four");
    expect(await w.waitTexts(4)).toEqual(["one", "two", "three", "four"]);
    await settle();
    expect(await w.texts()).toHaveLength(4);
    expect(w.fake.gateway.identifies).toBe(1);
  });

  test("a lost session (op 9, not resumable): a fresh IDENTIFY, and catch-up fetches the gap", async () => {
    const w = await world();
    w.say(w.general.id, "one");
    await w.waitTexts(1);
    w.say(w.general.id, "lost in the gap", { dispatch: false });
    w.fake.gateway.invalidSession(false);
    expect(await w.waitTexts(2)).toEqual(["one", "lost in the gap"]);
    expect(w.fake.gateway.identifies).toBe(2);
    await w.gw.untilState("ok");
    w.say(w.general.id, "after");
    expect(await w.waitTexts(3)).toEqual(["one", "lost in the gap", "after"]);
    await settle();
    expect(await w.texts()).toHaveLength(3);
    // The second session's catch-up ended too (so the connected mark can move again).
    await waitFor(
      () =>
        w.gw.log.entries.filter(
          (e) => e.msg === "Discord catch-up done" && (e.obj as { session?: string }).session === "new",
        ).length >= 2
          ? true
          : undefined,
      "two finished session catch-ups",
    );
  });

  test("stop closes the gateway cleanly (close 1000 ends the session)", async () => {
    const w = await world();
    expect(w.fake.gateway.connections()).toBe(1);
    await w.gw.svc.close();
    await waitFor(
      () => (w.fake.gateway.connections() === 0 ? true : undefined),
      "the socket to close",
      2_000,
    );
  });
});

describe("health", () => {
  test("a rejected token is an error that says what to do; the API keeps serving", async () => {
    const w = await world({ env: { GW_COMMUNITY_BOT_TOKEN: "wrong-token" }, wait: false });
    await w.gw.untilState("error");
    expect((await w.gw.health()).detail).toContain("Reset Token");
    const res = await w.gw.request("GET", "/messages/unread", { headers: AGENT });
    expect(res.status).toBe(200);
  });

  test("refused privileged intents (close 4014) is an error naming the Message Content intent", async () => {
    const w = await world({ wait: false }, { messageContentIntent: false });
    await w.gw.untilState("error");
    expect((await w.gw.health()).detail).toContain("Message Content intent");
    const health = await (await w.gw.request("GET", "/healthz")).json();
    expect(health).toMatchObject({ status: "degraded" });
  });

  test("a login that hangs does not hold the service: starting, then degraded past the deadline", async () => {
    const hung = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    servers.push(hung);
    const fake = await discord.start();
    const t0 = performance.now();
    const gw = await communityService(fake, {
      env: { GW_COMMUNITY_API_URL: `http://127.0.0.1:${hung.port}/api` },
      tuning: { loginDeadlineMs: 300, restTimeoutMs: 5_000 },
      wait: false,
    });
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect((await gw.health()).state).toBe("starting");
    await gw.untilState("degraded");
    expect((await gw.health()).detail).toStartWith("Still connecting to Discord");
  });

  test("a zombie connection (heartbeats not acknowledged) is reported and recovers", async () => {
    const w = await world({ tuning: { heartbeatSilenceMs: 60_000 } }, { heartbeatIntervalMs: 300 });
    w.fake.gateway.ackHeartbeats = false;
    await w.gw.untilState("degraded");
    expect((await w.gw.health()).detail).toStartWith("Reconnecting to Discord");
    w.fake.gateway.ackHeartbeats = true;
    await w.gw.untilState("ok");
    w.say(w.general.id, "still here");
    expect(await w.waitTexts(1)).toEqual(["still here"]);
  });
});
