/**
 * A send the platform accepted is never posted again (issue hardening, items 1 and 2), on both
 * platforms through the real connectors: the store fails at the instant after the platform call
 * (writing the outbound record, or completing the Idempotency-Key), the request and its replays answer
 * 502 `outcome: "unknown"` without a second post, and once the store heals the replay gets the 200
 * with the one record. And a threaded iMessage send keeps its `reply_to` when the connector stored
 * Messages' echo row before osascript returned.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import type { Envelope } from "../../src/core/envelope.ts";
import { type FaultPoint, faultyStore } from "../fakes/faulty-store.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { deviceService, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH, type makeRequest } from "../helpers/service.ts";

type Request = ReturnType<typeof makeRequest>;

const discord = fakeDiscords();

async function unread(request: Request): Promise<Envelope[]> {
  const res = await request("GET", "/messages/unread?limit=100", { headers: AGENT });
  return ((await res.json()) as { messages: Envelope[] }).messages;
}

async function context(request: Request, channelId: string, aroundId: string): Promise<Envelope[]> {
  const q = `channel_id=${encodeURIComponent(channelId)}&around_message_id=${aroundId}`;
  const res = await request("GET", `/messages/context?${q}`, { headers: AGENT });
  return ((await res.json()) as { messages: Envelope[] }).messages;
}

/** Sends with a key while the store fails at `point`, replays, heals, and checks one post, one record. */
async function sendThroughFault(w: {
  request: Request;
  store: ReturnType<typeof faultyStore>;
  point: FaultPoint;
  channelId: string;
  inbound: Envelope;
  platformPosts: () => number;
}) {
  const key = `key-${w.point}-${crypto.randomUUID()}`;
  const body = { channel_id: w.channelId, text: `reply through a ${w.point} fault`, reply_to: w.inbound.id };
  const send = () =>
    w.request("POST", "/messages/send", { headers: { ...AUTH, "idempotency-key": key }, body });

  w.store.fail(w.point);
  const first = await send();
  expect(first.status).toBe(502);
  expect(await first.json()).toMatchObject({
    error: { code: "PLATFORM_SEND_FAILED", details: { outcome: "unknown", key } },
  });
  expect(w.store.failures()).toBeGreaterThan(0);
  expect(w.platformPosts()).toBe(1);

  // Replays while the store still fails: the same unknown outcome, never a second post.
  for (let i = 0; i < 3; i++) {
    const again = await send();
    expect(again.status).toBe(502);
    expect(await again.json()).toMatchObject({ error: { details: { outcome: "unknown" } } });
  }
  // A different body under the same key is still a reuse.
  const other = await w.request("POST", "/messages/send", {
    headers: { ...AUTH, "idempotency-key": key },
    body: { ...body, text: "something else" },
  });
  expect(other.status).toBe(422);

  w.store.heal();
  const recorded = await waitFor(async () => {
    const res = await send();
    return res.status === 200 ? await res.text() : undefined;
  }, "the replay answered 200 once the record landed");
  const { message_id } = JSON.parse(recorded) as { message_id: string };
  expect(await (await send()).text()).toBe(recorded);
  expect(w.platformPosts()).toBe(1);

  const around = await context(w.request, w.channelId, w.inbound.id);
  const outbound = around.filter((m) => m.direction === "outbound");
  expect(outbound.map((m) => [m.id, m.text, m.reply_to])).toEqual([[message_id, body.text, w.inbound.id]]);
}

describe("a send the platform accepted is never posted again", () => {
  for (const point of ["record", "complete"] as const) {
    test(`Discord: the store fails at ${point}`, async () => {
      const { fake, ann, general } = await discord.home();
      const store = faultyStore();
      const gw = await communityService(fake, { allowlist: allowAnn(ann.id), openStore: store.open });
      fake.message(general.id, { author: ann, content: "question?" });
      const [inbound] = await waitFor(async () => {
        const l = await unread(gw.request);
        return l.length > 0 ? l : undefined;
      }, "the inbound message");
      await sendThroughFault({
        request: gw.request,
        store,
        point,
        channelId: `community_chat:channel:${general.id}`,
        inbound: inbound as Envelope,
        platformPosts: () => fake.posted.length,
      });
    });

    test(`iMessage: the store fails at ${point}`, async () => {
      const store = faultyStore();
      const t = await deviceService({ openStore: store.open });
      t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "question?" });
      const [inbound] = await waitFor(async () => {
        const l = await unread(t.request);
        return l.length > 0 ? l : undefined;
      }, "the inbound message");
      const standInLog = t.env.GW_STANDIN_LOG as string;
      const standInCalls = () =>
        existsSync(standInLog) ? readFileSync(standInLog, "utf8").trim().split("\n").length : 0;
      await sendThroughFault({
        request: t.request,
        store,
        point,
        channelId: FRIEND,
        inbound: inbound as Envelope,
        platformPosts: standInCalls,
      });
    });
  }
});

describe("reply_to is kept when the echo is stored first", () => {
  test("Messages writes the row 400 ms before osascript returns: one record, with reply_to", async () => {
    const t = await deviceService({ env: { GW_STANDIN_EXIT_DELAY_MS: "400" } });
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "question?" });
    const [inbound] = await waitFor(async () => {
      const l = await unread(t.request);
      return l.length > 0 ? l : undefined;
    }, "the inbound message");
    const res = await t.request("POST", "/messages/send", {
      headers: AUTH,
      body: { channel_id: FRIEND, text: "threaded answer", reply_to: inbound?.id },
    });
    expect(res.status).toBe(200);
    const { message_id } = (await res.json()) as { message_id: string };
    // The poller stored the echo while osascript was still running, so the record is that row.
    const storedByIngest = t.log.entries.some(
      (e) => e.msg === "message stored" && (e.obj as { id?: string }).id === message_id,
    );
    expect(storedByIngest).toBe(true);
    const around = await context(t.request, FRIEND, inbound?.id as string);
    expect(around.filter((m) => m.direction === "outbound").map((m) => [m.id, m.reply_to])).toEqual([
      [message_id, inbound?.id ?? null],
    ]);
  });
});
