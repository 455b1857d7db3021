/**
 * A tombstone purges everything (extensions.md §4), through the real Discord connector (the fake Discord
 * and discord.js) and the real webhook dispatcher: after a message is deleted, its earlier edit events
 * answer `data: {}` in GET /events, its deliveries not yet made (pending or dead, of the message and of its
 * events) are gone and never reach the target, and `gw webhooks redeliver` refuses a delivered one with a
 * clear line. Only the `message.deleted` event goes out.
 */
import { afterEach, expect, test } from "bun:test";
import type { GwEvent } from "../../src/core/event.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { spawnGw, waitFor } from "../helpers/process.ts";
import { AGENT } from "../helpers/service.ts";

const discord = fakeDiscords();
const sinks: ReturnType<typeof webhookSink>[] = [];
afterEach(async () => {
  for (const s of sinks.splice(0)) s.stop();
});

type Delivery = { id: string; message_id: string; event_id: string | null; status: string };

test("an edited then deleted message: earlier edit events empty, pending and dead deliveries dropped, redelivery refused", async () => {
  // "alpha": the message is delivered, its edit event keeps failing (pending); "bravo": both refused (dead).
  const sink = webhookSink((_, hit) => {
    const kind = hit.headers["x-gw-event"];
    if (kind === "message.deleted") return 204;
    if (hit.body.includes("alpha")) return kind === "message" ? 204 : 503;
    return hit.body.includes("bravo") ? 400 : 204;
  });
  sinks.push(sink);
  const { fake, ann, general } = await discord.home();
  const gw = await communityService(fake, {
    allowlist: allowAnn(ann.id),
    env: {
      GW_WEBHOOK_URL: sink.url,
      GW_WEBHOOK_SECRET: "tombstone-secret",
      GW_WEBHOOK_EVENTS: "all",
      GW_WEBHOOK_RETRY_DELAYS_MS: "60000,60000,60000,60000",
    },
  });
  const db = gw.svc.store.db;
  const deliveries = () =>
    db.query("SELECT id, message_id, event_id, status FROM webhook_deliveries").all() as Delivery[];
  const alpha = fake.message(general.id, { author: ann, content: "alpha one" });
  const bravo = fake.message(general.id, { author: ann, content: "bravo one" });
  await waitFor(
    () => (deliveries().length === 2 && deliveries().every((d) => d.status !== "pending") ? true : undefined),
    "two message deliveries made",
  );
  fake.edit(general.id, alpha.id as string, "alpha two");
  fake.edit(general.id, bravo.id as string, "bravo two");
  await waitFor(
    () =>
      sink.hits.filter((h) => h.headers["x-gw-event"] === "message.edited").length >= 2 ? true : undefined,
    "both edit events attempted",
  );
  await waitFor(
    () => (deliveries().some((d) => d.event_id !== null && d.status === "dead") ? true : undefined),
    "bravo's edit dead",
  );
  const before = deliveries();
  const delivered = before.find((d) => d.status === "delivered" && d.event_id === null) as Delivery;
  expect(before.map((d) => d.status).sort()).toEqual(["dead", "dead", "delivered", "pending"]);
  const hitsBefore = sink.hits.length;

  fake.remove(general.id, [alpha.id as string]);
  fake.remove(general.id, [bravo.id as string]);
  const res = async () => {
    const r = await gw.request("GET", "/events?limit=100", { headers: AGENT });
    return ((await r.json()) as { events: GwEvent[] }).events;
  };
  await waitFor(
    async () => ((await res()).filter((e) => e.kind === "message.deleted").length === 2 ? true : undefined),
    "two deletes",
  );
  const events = await res();
  expect(events.map((e) => [e.kind, e.data])).toEqual([
    ["message.edited", {}],
    ["message.edited", {}],
    ["message.deleted", {}],
    ["message.deleted", {}],
  ]);
  // Left: the delivered message delivery and the two message.deleted event deliveries.
  await waitFor(
    () => (deliveries().every((d) => d.status === "delivered") ? true : undefined),
    "the deletes delivered",
  );
  const after = deliveries();
  expect(after).toHaveLength(3);
  expect(after.filter((d) => d.event_id === null).map((d) => d.id)).toEqual([delivered.id]);
  // Nothing that went out after the delete holds either text.
  const later = sink.hits.slice(hitsBefore);
  expect(later.map((h) => h.headers["x-gw-event"])).toEqual(["message.deleted", "message.deleted"]);
  expect(later.some((h) => /alpha|bravo/.test(h.body))).toBe(false);
  expect(JSON.stringify(db.query("SELECT data FROM events").all())).not.toMatch(/alpha|bravo/);

  const redeliver = async (args: string[]) => {
    const p = spawnGw(["webhooks", "redeliver", ...args], gw.env);
    return { code: await p.exited, ...p.output() };
  };
  const refused = await redeliver([delivered.id]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`delivery ${delivered.id} is of a message that was unsent or deleted`);
  expect(await redeliver(["--all-dead"])).toMatchObject({
    code: 0,
    stdout: "0 dead deliveries queued again\n",
  });
  // The delete's own delivery may be re-driven: it holds nothing but the news.
  const deletedDelivery = after.find((d) => d.event_id !== null) as Delivery;
  expect((await redeliver([deletedDelivery.id])).code).toBe(0);
}, 30_000);
