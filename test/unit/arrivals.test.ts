import { describe, expect, test } from "bun:test";
import { type Arrival, createArrivals, matches } from "../../src/ingest/arrivals.ts";

const A: Arrival = { source: "device_messenger", channelId: "+15555550100", messageTs: 1000 };
const ANY = { source: null, channelId: null, sinceMs: null };

describe("matches", () => {
  test.each([
    [ANY, true],
    [{ ...ANY, source: "device_messenger" as const }, true],
    [{ ...ANY, source: "community_chat" as const }, false],
    [{ ...ANY, channelId: "+15555550100" }, true],
    [{ ...ANY, channelId: "+15555550101" }, false],
    [{ ...ANY, sinceMs: 999 }, true],
    [{ ...ANY, sinceMs: 1000 }, false],
  ])("%o → %p", (filter, expected) => {
    expect(matches(filter, A)).toBe(expected);
  });
});

describe("createArrivals", () => {
  test("a matching arrival wakes its waiter; others keep waiting", async () => {
    const arrivals = createArrivals({ maxWaiters: 10 });
    const other = arrivals.wait({ ...ANY, channelId: "elsewhere" }, 60_000);
    const mine = arrivals.wait({ ...ANY, channelId: A.channelId }, 60_000);
    arrivals.publish([{ ...A, channelId: "nowhere" }]);
    expect(arrivals.waiting()).toBe(2);
    arrivals.publish([A]);
    expect(await mine).toBe("arrived");
    expect(arrivals.waiting()).toBe(1);
    arrivals.close();
    expect(await other).toBe("closed");
  });

  test("a wait ends at its deadline", async () => {
    const arrivals = createArrivals({ maxWaiters: 10 });
    const t0 = performance.now();
    expect(await arrivals.wait(ANY, 30)).toBe("timeout");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
    expect(arrivals.waiting()).toBe(0);
    expect(await arrivals.wait(ANY, 0)).toBe("timeout");
  });

  test("beyond the bound a wait ends at once; a freed place can be taken again", async () => {
    const arrivals = createArrivals({ maxWaiters: 2 });
    const held = [arrivals.wait(ANY, 60_000), arrivals.wait(ANY, 60_000)];
    expect(await arrivals.wait(ANY, 60_000)).toBe("full");
    arrivals.publish([A]);
    expect(await Promise.all(held)).toEqual(["arrived", "arrived"]);
    const again = arrivals.wait(ANY, 60_000);
    expect(arrivals.waiting()).toBe(1);
    arrivals.close();
    expect(await again).toBe("closed");
  });

  test("a full table answers a wait with no time left as a timeout (it needs no place)", async () => {
    const arrivals = createArrivals({ maxWaiters: 1 });
    const held = arrivals.wait(ANY, 60_000);
    expect(await arrivals.wait(ANY, 0)).toBe("timeout");
    expect(await arrivals.wait(ANY, -5)).toBe("timeout");
    expect(await arrivals.wait(ANY, 1)).toBe("full");
    arrivals.close();
    expect(await held).toBe("closed");
  });

  test("an aborted request gives its place back; after close every wait ends at once", async () => {
    const arrivals = createArrivals({ maxWaiters: 1 });
    const abort = new AbortController();
    const held = arrivals.wait(ANY, 60_000, abort.signal);
    abort.abort();
    expect(await held).toBe("timeout");
    expect(arrivals.waiting()).toBe(0);
    const aborted = new AbortController();
    aborted.abort();
    expect(await arrivals.wait(ANY, 60_000, aborted.signal)).toBe("timeout");
    arrivals.close();
    expect(await arrivals.wait(ANY, 60_000)).toBe("closed");
  });
});
