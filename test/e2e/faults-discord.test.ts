/**
 * Faults survived, Discord (test/evidence/faults/discord.ts): a real gw serve logged in to the fake
 * Discord while the gateway socket drops again and again, message creation answers a 503 storm and
 * long and short 429 storms with Discord's headers; sends map to the documented errors, nothing is
 * lost or posted twice, and the invalid requests stay far below Discord's ban budget.
 */
import { expect, test } from "bun:test";
import { DROPS, discordFaults, LONG_429_ASKED_MAX, LONG_429_SENDS } from "../evidence/faults/discord.ts";

test("Discord socket drops, 5xx and 429 storms: reconnects, documented errors, nothing lost or twice", async () => {
  const run = await discordFaults();
  expect(run.rows.filter((r) => !r.ok)).toEqual([]);
  const d = run.details;
  expect(d.drops).toMatchObject({ duplicates: 0, identifies: 1, state: "ok" });
  expect(d.drops.resumes).toBeGreaterThanOrEqual(DROPS);
  expect(d.drops.storedOnce).toBe(d.drops.posted);
  expect(d.storm5xx.codes).toEqual(["502 PLATFORM_SEND_FAILED (status 503)"]);
  expect(d.storm5xx).toMatchObject({ postedTwice: 0, replayBodySame: true });
  expect(d.storm5xx.posted).toBe(d.storm5xx.ok);
  expect(d.long429.failed).toBe(LONG_429_SENDS);
  expect(d.long429.answered429).toBeLessThanOrEqual(LONG_429_ASKED_MAX);
  for (const wait of d.long429.retryAfterMs) expect(wait).toBeGreaterThan(3_000);
  expect(d.short429).toMatchObject({ status: 200, posted: 1, globalStatus: 200 });
  expect(d.invalid.longPer10Min).toBeLessThan(100);
}, 60_000);
