import { expect, test } from "bun:test";
import { MAX_ATTEMPTS, nextStep } from "../../src/webhooks/schedule.ts";

const DELAYS = [5000, 30000, 120000, 600000];

test.each([200, 201, 202, 204, 299])("HTTP %i delivers", (status) => {
  expect(nextStep(1, { status }, DELAYS, 0.5)).toEqual({ state: "delivered" });
});

test.each([400, 401, 403, 404, 408, 410, 422, 429, 499])(
  "HTTP %i is dead at once, even on the first attempt",
  (status) => {
    expect(nextStep(1, { status }, DELAYS, 0.5)).toEqual({ state: "dead", reason: `HTTP ${status}` });
  },
);

test.each([
  [{ status: 500 }],
  [{ status: 503 }],
  [{ status: 302 }],
  [{ status: 301 }],
  [{ error: "connection refused" }],
  [{ error: "timed out after 15000 ms" }],
])("%p is retried on the schedule, then dead on the 5th attempt", (result) => {
  for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
    const base = DELAYS[attempt - 1] as number;
    expect(nextStep(attempt, result, DELAYS, 0.5)).toEqual({ state: "retry", delayMs: base });
    expect(nextStep(attempt, result, DELAYS, 0)).toEqual({ state: "retry", delayMs: base * 0.8 });
    const high = nextStep(attempt, result, DELAYS, 0.999999);
    expect(high.state === "retry" && high.delayMs <= base * 1.2 && high.delayMs > base * 1.19).toBe(true);
  }
  expect(nextStep(MAX_ATTEMPTS, result, DELAYS, 0.5)).toEqual({ state: "dead", reason: "failed 5 attempts" });
});

test("a 2xx on the last attempt still delivers", () => {
  expect(nextStep(MAX_ATTEMPTS, { status: 204 }, DELAYS, 0.5)).toEqual({ state: "delivered" });
});
