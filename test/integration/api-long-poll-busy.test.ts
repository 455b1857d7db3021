/**
 * A full long-poll table (extensions.md §4 "Bounded under faults"), through the real service: with
 * LONG_POLL_MAX_WAITERS unread and events polls parked, the next request that would have to wait gets 503
 * SERVICE_BUSY with the error envelope and an integer `Retry-After` >= 1 (also in `details.retry_after_s`),
 * never an empty 200; a request with something to answer, or no wait, is still a 200; the OpenAPI document
 * declares the 503.
 */
import { describe, expect, test } from "bun:test";
import type { GwEvent } from "../../src/core/event.ts";
import { systemClock } from "../../src/core/ports.ts";
import { busyRetryAfterS } from "../../src/http/long-poll-busy.ts";
import { LONG_POLL_MAX_WAITERS } from "../../src/service.ts";
import { AGENT, AUTH, inbound, testService } from "../helpers/service.ts";

type World = Awaited<ReturnType<typeof testService>>;

/** Parks `n` held polls on `path`; `settled` counts those the service answered. */
function park(t: World, path: string, n: number) {
  let settled = 0;
  const answers = Array.from({ length: n }, (_, i) =>
    t
      .request("GET", path, { headers: { ...AUTH, "x-agent-id": `parked-${i}` } })
      .finally(() => void settled++),
  );
  return { answers, settled: () => settled };
}

/** Until `probe` holds; a few event-loop turns at most (the parked requests reach their wait). */
async function untilTrue(probe: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !probe(); i++) await new Promise((r) => setImmediate(r));
  if (!probe()) throw new Error(`never: ${what}`);
}

async function expectBusy(res: Response, waitS: number) {
  expect(res.status).toBe(503);
  const retryAfter = res.headers.get("retry-after") ?? "";
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  expect(Number(retryAfter)).toBe(busyRetryAfterS(waitS));
  expect(await res.json()).toEqual({
    error: {
      code: "SERVICE_BUSY",
      message: expect.any(String),
      details: { retry_after_s: Number(retryAfter) },
    },
  });
}

describe("a full long-poll table", () => {
  test(`unread: beyond ${LONG_POLL_MAX_WAITERS} held polls, a wait is 503 SERVICE_BUSY; a ready page is 200`, async () => {
    const t = await testService({ clock: systemClock });
    const held = park(t, "/messages/unread?wait=60", LONG_POLL_MAX_WAITERS);
    await untilTrue(() => t.svc.arrivals.waiting() === LONG_POLL_MAX_WAITERS, "the table full");

    const t0 = performance.now();
    await expectBusy(await t.request("GET", "/messages/unread?wait=25", { headers: AGENT }), 25);
    await expectBusy(await t.request("GET", "/messages/unread?wait=60", { headers: AGENT }), 60);
    expect(performance.now() - t0).toBeLessThan(1000);
    // No wait asked: the empty page at once, as the spec's unread does.
    const now = await t.request("GET", "/messages/unread", { headers: AGENT });
    expect(now.status).toBe(200);
    expect(held.settled()).toBe(0);

    // A message for the parked agents wakes them; a page that is ready never waits for a place.
    const other = { ...AUTH, "x-agent-id": "agent-with-mail" };
    t.seed([inbound({ text: "for everyone", timestampMs: Date.now() })]);
    const ready = await t.request("GET", "/messages/unread?wait=60", { headers: other });
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { messages: { text: string }[] }).messages.map((m) => m.text)).toEqual([
      "for everyone",
    ]);
    const answers = await Promise.all(held.answers);
    expect(answers.every((r) => r.status === 200)).toBe(true);
  });

  test(`events: beyond ${LONG_POLL_MAX_WAITERS} held polls, a wait is 503 SERVICE_BUSY; a ready page is 200`, async () => {
    const t = await testService({ clock: systemClock });
    const m = inbound({ text: "v0", timestampMs: Date.now() });
    t.seed([m]);
    const edit = (text: string) =>
      t.svc.ingest({
        source: "device_messenger",
        messages: [],
        cursor: null,
        changes: [
          {
            kind: "edit",
            source: "device_messenger",
            targetPlatformId: m.platformId,
            text,
            timestampMs: Date.now(),
            dedupeKey: `edit:${text}`,
          },
        ],
      });
    edit("v1");
    const first = (await (await t.request("GET", "/events", { headers: AGENT })).json()) as {
      events: GwEvent[];
      next_since: string;
    };
    expect(first.events).toHaveLength(1);
    const after = first.next_since;

    const held = park(t, `/events?since=${after}&wait=60`, LONG_POLL_MAX_WAITERS);
    await untilTrue(() => t.svc.eventArrivals.waiting() === LONG_POLL_MAX_WAITERS, "the table full");
    await expectBusy(await t.request("GET", `/events?since=${after}&wait=25`, { headers: AGENT }), 25);
    await expectBusy(await t.request("GET", `/events?since=${after}&wait=5`, { headers: AGENT }), 5);
    // Something to answer: 200 with it, full table or not; no wait asked: the empty page.
    const ready = await t.request("GET", "/events?wait=60", { headers: AGENT });
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { events: GwEvent[] }).events).toHaveLength(1);
    expect((await t.request("GET", `/events?since=${after}`, { headers: AGENT })).status).toBe(200);
    expect(held.settled()).toBe(0);

    edit("v2");
    const answers = await Promise.all(held.answers);
    expect(answers.every((r) => r.status === 200)).toBe(true);
  });

  test("the OpenAPI document declares 503 on both long polls, with the error envelope", async () => {
    const t = await testService();
    const doc = (await (await t.request("GET", "/openapi.json", { headers: AUTH })).json()) as {
      paths: Record<string, { get: { responses: Record<string, unknown>; description?: string } }>;
    };
    for (const path of ["/messages/unread", "/events"]) {
      const get = doc.paths[path]?.get;
      expect(Object.keys(get?.responses ?? {})).toContain("503");
      expect(get?.description).toContain("SERVICE_BUSY");
    }
    expect(JSON.stringify(doc)).toContain("SERVICE_BUSY");
  });
});

test("busyRetryAfterS: a tenth of the wait asked, whole seconds, 1 to 5", () => {
  const cases: [number, number][] = [
    [0, 1],
    [1, 1],
    [10, 1],
    [11, 2],
    [25, 3],
    [40, 4],
    [50, 5],
    [60, 5],
    [600, 5],
    [-3, 1],
  ];
  for (const [wait, s] of cases) expect([wait, busyRetryAfterS(wait)]).toEqual([wait, s]);
});
