import { expect, test } from "bun:test";
import { createSlots } from "../../src/core/slots.ts";

test("at most n run at once; the others start in arrival order as slots free up; a failure frees its slot", async () => {
  const slots = createSlots(2);
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const job = (i: number) =>
    slots(async () => {
      started.push(i);
      running += 1;
      peak = Math.max(peak, running);
      await Bun.sleep(5);
      running -= 1;
      if (i === 1) throw new Error("boom");
      return i;
    });
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map(job));
  expect(peak).toBe(2);
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(results.map((r) => r.status)).toEqual([
    "fulfilled",
    "rejected",
    "fulfilled",
    "fulfilled",
    "fulfilled",
  ]);
});
