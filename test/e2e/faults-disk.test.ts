/**
 * Faults survived, disk full (test/evidence/faults/disk-full.ts): gw serve's file-size limit drops to 0
 * bytes and comes back (prlimit; Linux only, skipped with a log line elsewhere). Writing requests get
 * 500 INTERNAL_ERROR at once, the chat.db cursor holds, nothing acknowledged is lost, and work resumes
 * within one poll of space returning.
 */
import { expect, test } from "bun:test";
import { diskFullFaults, RESUME_WITHIN_MS } from "../evidence/faults/disk-full.ts";
import { fileSizeLimiter } from "../evidence/faults/rlimit.ts";

const limiter = fileSizeLimiter();
if ("unavailable" in limiter) console.log(`faults-disk: skipped: ${limiter.unavailable}`);

test.skipIf("unavailable" in limiter)(
  "disk full on the state database: 500s, cursor held, nothing lost, resumes within a poll",
  async () => {
    const run = await diskFullFaults();
    expect(run.rows.filter((r) => !r.ok)).toEqual([]);
    const { whileFull: w, after: a } = run.details;
    for (const x of [w.markRead, w.sendWithKey, w.sendWithoutKey])
      expect(x).toMatchObject({ status: 500, code: "INTERNAL_ERROR" });
    expect(w).toMatchObject({ unreadStatus: 200, healthStatus: 200, cursorHeld: true, alive: true });
    expect(w.webhookMaxPerDelivery).toBeLessThanOrEqual(1);
    expect(a.resumeMs).toBeLessThan(RESUME_WITHIN_MS);
    expect(a).toMatchObject({
      storedOnce: 5,
      acknowledgedKept: true,
      readMarkKept: true,
      webhookCountsMatch: true,
      integrity: "ok",
      exitCode: 0,
    });
  },
  60_000,
);
