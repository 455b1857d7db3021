/**
 * Faults survived, webhooks (test/evidence/faults/webhooks.ts): real gw serve processes against a
 * TCP-level receiver that answers 5xx, every 4xx of the spec, a 302, hangs, resets mid-body or cuts its
 * body off, and against a refused port; and a schedule interrupted by a restart. `bun run faults`
 * runs the same scenarios and records them in docs/EVIDENCE.md.
 */
import { expect, test } from "bun:test";
import { webhookFaults } from "../evidence/faults/webhooks.ts";

test("webhook targets that fail: exact attempt counts, gaps on the schedule, dead, still unread; a restart resumes the schedule", async () => {
  const run = await webhookFaults();
  expect(run.rows.filter((r) => !r.ok)).toEqual([]);
  const byKind = new Map(run.details.kinds.map((k) => [k.kind, k]));
  for (const kind of [
    "500",
    "502",
    "503",
    "504",
    "hang past the timeout",
    "reset mid-body",
    "503 cut off mid-body",
    "302",
    "refused connection",
  ])
    expect(byKind.get(kind)).toMatchObject({ attempts: 5, status: "dead", deliveryIds: 1, unread: true });
  for (const status of [400, 401, 403, 404, 408, 410, 429])
    expect(byKind.get(String(status))).toMatchObject({
      attempts: 1,
      status: "dead",
      lastCode: status,
      unread: true,
    });
  expect(byKind.get("302")?.lastCode).toBe(302);
  expect(run.details.redirectTargetHits).toBe(0);
  expect(run.details.resetMidBody).toBe(true);
  expect(byKind.get("refused connection")?.lastCode).toBeNull();
  expect(run.details.restart).toMatchObject({ attempts: 5, status: "dead", beforeStop: 2 });
}, 60_000);
