/** Outbound webhooks against a real local receiver: signing, the state table, retries, limits. */
import { afterAll, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { Envelope } from "../../src/core/envelope.ts";
import { systemClock } from "../../src/core/ports.ts";
import type { DeliveryRow } from "../../src/store/deliveries.ts";
import { verifyGwSignature } from "../../src/webhooks/sign.ts";
import { type SinkReply, webhookSink } from "../fakes/webhook-sink.ts";
import { freePort, waitFor } from "../helpers/process.ts";
import { AGENT, inbound, testService } from "../helpers/service.ts";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const sinks: { stop(): unknown }[] = [];
afterAll(() => {
  for (const s of sinks) s.stop();
});

async function setup(replies: (n: number) => SinkReply, env: Record<string, string> = {}) {
  const sink = webhookSink(replies);
  sinks.push(sink);
  const t = await testService({
    clock: systemClock,
    env: {
      GW_WEBHOOK_URL: sink.url,
      GW_WEBHOOK_SECRET: SECRET,
      GW_WEBHOOK_RETRY_DELAYS_MS: "40,40,40,40",
      GW_WEBHOOK_TIMEOUT_MS: "300",
      ...env,
    },
  });
  const delivery = (messageId: string) => t.svc.store.deliveries.forMessage(messageId) as DeliveryRow;
  const settled = (messageId: string) =>
    waitFor(() => {
      const d = delivery(messageId);
      return d.status === "pending" ? undefined : d;
    }, "delivery settled");
  return { ...t, sink, delivery, settled };
}

describe("delivering", () => {
  test("the messages of one channel stored in one batch are delivered in their order", async () => {
    const t = await setup(() => 204);
    const ids = t.seed(Array.from({ length: 30 }, (_, i) => inbound({ text: `n${i}` })));
    await waitFor(() => (t.sink.hits.length === 30 ? true : undefined), "30 deliveries");
    expect(t.sink.hits.map((h) => (JSON.parse(h.body) as Envelope).id)).toEqual(ids);
  });

  test("204: delivered once, signed over the exact body, with a stable delivery id and the Envelope", async () => {
    const t = await setup(() => 204);
    const [id] = t.seed([inbound({ text: "ping ✓" })]) as [string];
    const d = await t.settled(id);
    expect(d).toMatchObject({ status: "delivered", attempt_count: 1, last_code: 204 });
    expect(t.sink.hits).toHaveLength(1);
    const hit = t.sink.hits[0];
    if (!hit) throw new Error("no hit");
    expect(hit.headers["content-type"]).toBe("application/json");
    expect(hit.headers["x-gw-delivery-id"]).toBe(d.id);
    expect(hit.headers["webhook-id"]).toBe(d.id);
    expect(verifyGwSignature(SECRET, hit.body, hit.headers["x-gw-signature"] ?? null)).toBe(true);
    expect(new Webhook(SECRET).verify(hit.body, hit.headers)).toBeDefined();
    const envelope = JSON.parse(hit.body) as Envelope;
    expect(envelope).toMatchObject({
      id,
      text: "ping ✓",
      direction: "inbound",
      sender: { person_id: "ann" },
    });
  });

  test.each([200, 201, 202])("any 2xx (%i) delivers", async (status) => {
    const t = await setup(() => status);
    const [id] = t.seed([inbound()]) as [string];
    expect((await t.settled(id)).status).toBe("delivered");
  });

  test("quarantined and outbound messages are never pushed", async () => {
    const t = await setup(() => 204);
    const ids = t.seed([
      inbound({ sender: { id: "+15555550999", displayName: "x" } }),
      inbound({ direction: "outbound" }),
      inbound(),
    ]);
    await t.settled(ids[2] as string);
    expect(t.sink.hits).toHaveLength(1);
    expect(t.delivery(ids[0] as string)).toBeNull();
    expect(t.delivery(ids[1] as string)).toBeNull();
  });

  test("without GW_WEBHOOK_URL nothing is queued or sent, silently", async () => {
    const t = await testService();
    const [id] = t.seed([inbound()]) as [string];
    expect(t.svc.store.deliveries.forMessage(id)).toBeNull();
    expect(
      t.log.entries.filter((e) => e.level === "warn" || e.level === "error").map((e) => e.msg),
    ).not.toContain(expect.stringContaining("webhook"));
  });
});

describe("the state table", () => {
  test.each([400, 401, 403, 404, 408, 410, 429])(
    "%i is dead after exactly one attempt; the message stays unread",
    async (status) => {
      const t = await setup(() => status);
      const [id] = t.seed([inbound()]) as [string];
      expect(await t.settled(id)).toMatchObject({ status: "dead", attempt_count: 1, last_code: status });
      expect(t.sink.hits).toHaveLength(1);
      const unread = (await (await t.request("GET", "/messages/unread", { headers: AGENT })).json()) as {
        messages: { id: string }[];
      };
      expect(unread.messages.map((m) => m.id)).toEqual([id]);
    },
  );

  test("5xx until dead: exactly 5 attempts, same delivery id, gaps on the schedule", async () => {
    const t = await setup(() => 500);
    const [id] = t.seed([inbound()]) as [string];
    expect(await t.settled(id)).toMatchObject({ status: "dead", attempt_count: 5, last_code: 500 });
    expect(t.sink.hits).toHaveLength(5);
    expect(new Set(t.sink.hits.map((h) => h.headers["x-gw-delivery-id"])).size).toBe(1);
    const gaps = t.sink.hits.slice(1).map((h, i) => h.at - (t.sink.hits[i]?.at ?? 0));
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(40 * 0.8 - 5);
  });

  test("503 twice then 204: delivered on the third attempt", async () => {
    const t = await setup((n) => (n <= 2 ? 503 : 204));
    const [id] = t.seed([inbound()]) as [string];
    expect(await t.settled(id)).toMatchObject({ status: "delivered", attempt_count: 3, last_code: 204 });
  });

  test("a refused connection is retried until dead", async () => {
    const t = await setup(() => 204, { GW_WEBHOOK_URL: `http://127.0.0.1:${freePort()}/webhook` });
    const [id] = t.seed([inbound()]) as [string];
    const d = await t.settled(id);
    expect(d).toMatchObject({ status: "dead", attempt_count: 5, last_code: null });
    expect(d.last_error).toBeTruthy();
  });

  test("a receiver that hangs past the timeout counts as a failed attempt", async () => {
    const t = await setup((n) => (n === 1 ? "hang" : 204));
    const [id] = t.seed([inbound()]) as [string];
    const d = await t.settled(id);
    expect(d).toMatchObject({ status: "delivered", attempt_count: 2 });
    expect(t.sink.hits).toHaveLength(2);
  });

  test("redirects are not followed", async () => {
    const target = webhookSink(() => 204);
    sinks.push(target);
    const t = await setup(() => ({ redirect: target.url }));
    const [id] = t.seed([inbound()]) as [string];
    expect(await t.settled(id)).toMatchObject({ status: "dead", attempt_count: 5, last_code: 302 });
    expect(target.hits).toHaveLength(0);
  });
});

test("at most 4 attempts in flight and one per channel", async () => {
  const t = await setup((n) => (n <= 12 ? "hang" : 204), { GW_WEBHOOK_TIMEOUT_MS: "150" });
  const channels = Array.from({ length: 6 }, (_, i) => ({
    id: `+1555555020${i}`,
    type: "dm" as const,
    platformRef: `c${i}`,
  }));
  let maxInFlight = 0;
  const sampler = setInterval(() => {
    maxInFlight = Math.max(maxInFlight, t.svc.dispatcher?.inFlight() ?? 0);
  }, 2);
  const ids = t.seed(channels.flatMap((channel) => [inbound({ channel }), inbound({ channel })]));
  for (const id of ids) await t.settled(id as string);
  clearInterval(sampler);
  expect(maxInFlight).toBe(4);
  for (const id of ids) expect(t.delivery(id as string).status).toBe("delivered");
  // One at a time per channel: a channel's next request starts only after its previous one timed out.
  const hung = t.sink.hits.slice(0, 12);
  for (const [i, hit] of hung.entries()) {
    const channel = (JSON.parse(hit.body) as Envelope).channel_id;
    const next = t.sink.hits
      .slice(i + 1)
      .find((h) => (JSON.parse(h.body) as Envelope).channel_id === channel);
    if (next) expect(next.at - hit.at).toBeGreaterThanOrEqual(140);
  }
});
