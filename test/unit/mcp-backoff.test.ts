/**
 * backoff.ts, exhaustively: the capped exponential with ±20 % jitter for failures without a wait, a 429 or
 * 503's Retry-After (header first, else `details.retry_after_s`) honoured up to 30 s and only ever
 * stretched, and odd inputs (negative or huge attempts, out-of-range randoms, HTTP-date headers) kept sane.
 */
import { describe, expect, test } from "bun:test";
import {
  BACKOFF_MS,
  backoffMs,
  type FailedAnswer,
  JITTER,
  RETRY_AFTER_MAX_MS,
  retryAfterS,
} from "../../src/mcp/backoff.ts";

const down: FailedAnswer = { status: 0, body: { error: { code: "INTERNAL_ERROR" } } };
const envelope = (code: string, details: Record<string, unknown> = {}) => ({
  error: { code, message: "x", details },
});
const busy = (retryAfter: string | null, details: Record<string, unknown> = {}): FailedAnswer => ({
  status: 503,
  body: envelope("SERVICE_BUSY", details),
  retryAfter,
});

describe("without a Retry-After: the capped exponential, ±20 %", () => {
  const RANDOMS = [0, 0.25, 0.5, 0.75, 0.999999];
  for (const status of [0, 500, 502, 504, 404, 401]) {
    test(`status ${status}`, () => {
      for (let attempt = 0; attempt < 9; attempt++) {
        const step = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)] as number;
        for (const r of RANDOMS) {
          const ms = backoffMs(attempt, { status, body: envelope("X") }, r);
          expect(ms).toBe(Math.round(step * (1 - JITTER + 2 * JITTER * r)));
          expect(ms).toBeGreaterThanOrEqual(Math.floor(step * (1 - JITTER)));
          expect(ms).toBeLessThanOrEqual(Math.ceil(step * (1 + JITTER)));
        }
      }
    });
  }

  test("the middle of the jitter is the step; the ends are 80 % and 120 %", () => {
    expect(BACKOFF_MS.map((_, i) => backoffMs(i, down, 0.5))).toEqual([...BACKOFF_MS]);
    expect(backoffMs(0, down, 0)).toBe(200);
    expect(backoffMs(4, down, 1)).toBe(6000);
    expect(backoffMs(1000, down, 0.5)).toBe(5000);
  });

  test("odd attempts and randoms stay inside the table and the jitter", () => {
    expect(backoffMs(-3, down, 0.5)).toBe(BACKOFF_MS[0]);
    expect(backoffMs(Number.NaN, down, 0.5)).toBe(BACKOFF_MS[0]);
    expect(backoffMs(Number.POSITIVE_INFINITY, down, 0.5)).toBe(5000);
    expect(backoffMs(1.7, down, 0.5)).toBe(BACKOFF_MS[1]);
    expect(backoffMs(2, down, -1)).toBe(800);
    expect(backoffMs(2, down, 7)).toBe(1200);
    expect(backoffMs(2, down, Number.NaN)).toBe(1000);
  });

  test("spread: 1,000 followers refused together do not come back together", () => {
    const waits = Array.from({ length: 1000 }, (_, i) => backoffMs(3, down, i / 1000));
    expect(new Set(waits).size).toBeGreaterThan(500);
    expect(Math.min(...waits)).toBe(1600);
    expect(Math.max(...waits)).toBeGreaterThan(2390);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2400);
  });
});

describe("a 429 or 503 that says when: honoured, capped at 30 s, only stretched", () => {
  for (const status of [429, 503]) {
    test(`status ${status}: the header's seconds, + 0..20 %, whatever the attempt`, () => {
      for (const s of [1, 2, 3, 5, 29, 30]) {
        for (const attempt of [0, 1, 4, 50]) {
          const a: FailedAnswer = { status, body: envelope("X"), retryAfter: String(s) };
          expect(backoffMs(attempt, a, 0)).toBe(s * 1000);
          expect(backoffMs(attempt, a, 0.5)).toBe(Math.round(s * 1000 * 1.1));
          expect(backoffMs(attempt, a, 1)).toBe(Math.round(s * 1000 * 1.2));
        }
      }
    });
  }

  test("never sooner than asked: every random gives at least the Retry-After", () => {
    for (let i = 0; i < 100; i++) expect(backoffMs(0, busy("3"), i / 100)).toBeGreaterThanOrEqual(3000);
  });

  test("a wait over 30 s is capped (then stretched by the jitter)", () => {
    expect(backoffMs(0, busy("31"), 0)).toBe(RETRY_AFTER_MAX_MS);
    expect(backoffMs(0, busy("86400"), 0.5)).toBe(RETRY_AFTER_MAX_MS * 1.1);
    expect(backoffMs(0, busy("86400"), 1)).toBe(RETRY_AFTER_MAX_MS * 1.2);
  });

  test("no header: details.retry_after_s (the service's envelope) counts", () => {
    expect(backoffMs(0, busy(null, { retry_after_s: 4 }), 0)).toBe(4000);
    expect(backoffMs(2, { status: 429, body: envelope("RATE_LIMITED", { retry_after_s: 2 }) }, 0)).toBe(2000);
    expect(backoffMs(0, busy(null, { retry_after_s: 0.5 }), 0)).toBe(500);
  });

  test("the header wins over details", () => {
    expect(backoffMs(0, busy("2", { retry_after_s: 9 }), 0)).toBe(2000);
  });

  test("no usable wait: the exponential step", () => {
    for (const header of [null, "", "0", "-1", "abc", "1.5", "Wed, 21 Oct 2015 07:28:00 GMT"])
      for (const details of [{}, { retry_after_s: 0 }, { retry_after_s: -2 }, { retry_after_s: "3" }])
        expect(backoffMs(1, busy(header, details), 0.5)).toBe(BACKOFF_MS[1]);
    expect(backoffMs(0, { status: 503, body: "not json", retryAfter: null }, 0.5)).toBe(BACKOFF_MS[0]);
    expect(backoffMs(0, { status: 503, body: null }, 0.5)).toBe(BACKOFF_MS[0]);
  });

  test("a Retry-After on another status (500, 0) is not the service asking to wait: the step", () => {
    for (const status of [0, 500, 502, 404])
      expect(backoffMs(0, { status, body: envelope("X", { retry_after_s: 9 }), retryAfter: "9" }, 0.5)).toBe(
        BACKOFF_MS[0],
      );
  });
});

test("retryAfterS: the header's delta-seconds, else details.retry_after_s, else null", () => {
  const cases: [string | null, Record<string, unknown>, number | null][] = [
    ["7", {}, 7],
    [" 7 ", {}, 7],
    ["0", { retry_after_s: 3 }, 3],
    ["x", { retry_after_s: 3 }, 3],
    [null, { retry_after_s: 3 }, 3],
    [null, {}, null],
    ["", { retry_after_s: Number.POSITIVE_INFINITY }, null],
  ];
  for (const [header, details, want] of cases)
    expect([header, details, retryAfterS(busy(header, details))]).toEqual([header, details, want]);
});
