/**
 * gw receiver and event deliveries (extensions.md §1): a verified delivery labelled with an event kind
 * is answered 204 and starts no agent run, a repeat of it too; a body that is no event is 400; a message
 * delivery labelled `message` runs the agent as before.
 */
import { expect, test } from "bun:test";
import type { GwEvent } from "../../src/core/event.ts";
import { waitFor } from "../helpers/process.ts";
import { envelopeOf, receiverUnderTest } from "../helpers/receiver.ts";

const event: GwEvent = {
  id: "evt_01JH2Z3Y4X5W6V7T8S9R0Q1P2N",
  kind: "reaction.added",
  source: "community_chat",
  channel_id: "community_chat:channel:1300000000000000001",
  message_id: "msg_01JH2Z3Y4X5W6V7T8S9R0Q1P2N",
  sender: { id: "1100000000000000001", display_name: "Ann", person_id: "ann" },
  timestamp: new Date().toISOString(),
  data: { emoji: "👍" },
};

test("an event delivery is acknowledged (204), deduplicated, and runs nothing; a message still runs", async () => {
  const r = receiverUnderTest();
  const label = { "x-gw-event": "reaction.added" };
  expect((await r.deliver(JSON.stringify(event), { deliveryId: "d-event", headers: label })).status).toBe(
    204,
  );
  expect((await r.deliver(JSON.stringify(event), { deliveryId: "d-event", headers: label })).status).toBe(
    204,
  );
  const bad = await r.deliver(JSON.stringify({ ...event, kind: "nope" }), { headers: label });
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ error: { code: "VALIDATION_FAILED" } });
  expect(r.journal.counts()).toEqual({ unfinished: 0, finished: 0 });
  const m = envelopeOf({ text: "a message" });
  expect((await r.deliver(m, { headers: { "x-gw-event": "message" } })).status).toBe(204);
  await waitFor(() => (r.agent.records().some((x) => x.event === "end") ? true : undefined), "the run");
  expect(r.agent.records().filter((x) => x.event === "start")).toHaveLength(1);
  expect(r.log.entries.filter((e) => e.msg.startsWith("event delivery acknowledged"))).toHaveLength(1);
});
