import { describe, expect, test } from "bun:test";
import { fetchMissed, HISTORY_PAGE, SKIP_COUNT_PAGES } from "../../src/connectors/community-chat/catch-up.ts";
import { snowflakeAt } from "../../src/connectors/community-chat/snowflake.ts";

const NOW = Date.UTC(2026, 10, 24, 12);
const HOUR = 3_600_000;

/**
 * A channel history of `n` messages one second apart, ending a minute ago, answered as Discord does:
 * newest first, the newest `limit` or those right before `before`. `failFrom`: requests from that one
 * (0-based) on fail.
 */
function channel(n: number, o: { failFrom?: number } = {}) {
  const ids = Array.from({ length: n }, (_, i) => snowflakeAt(NOW - 60_000 - (n - i) * 1000));
  const calls: { before?: string; limit: number }[] = [];
  const history = async (_channel: string, q: { before?: string; limit: number }) => {
    calls.push(q);
    if (o.failFrom !== undefined && calls.length > o.failFrom) throw new Error("HTTPError 500");
    const older = q.before ? ids.filter((id) => BigInt(id) < BigInt(q.before as string)) : ids;
    return older
      .slice(-q.limit)
      .reverse()
      .map((id) => ({
        id,
        channel_id: "111111111111111111",
        type: 0,
        content: `m${id}`,
        timestamp: new Date(NOW).toISOString(),
        author: { id: "222222222222222222", username: "ann" },
      }));
  };
  return { ids, calls, history };
}
const query = (maxMessages: number, position: string | null = null, maxAgeMs = 24 * HOUR) => ({
  discordChannelId: "c1",
  position,
  maxMessages,
  maxAgeMs,
  now: NOW,
});

describe("fetchMissed", () => {
  test("fewer than the bound: all of them, oldest first, in one request, nothing skipped", async () => {
    const c = channel(50);
    const missed = await fetchMissed(query(200), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids);
    expect([missed.skipped, missed.skippedAtLeast]).toEqual([0, false]);
    expect(c.calls).toEqual([{ limit: HISTORY_PAGE }]);
  });

  test("only what is newer than the position: one request when it is on the first page", async () => {
    const c = channel(150);
    const missed = await fetchMissed(query(200, c.ids[139] as string), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(140));
    expect(c.calls).toHaveLength(1);
  });

  test("pages back with `before` until the position", async () => {
    const c = channel(250);
    const missed = await fetchMissed(query(200, c.ids[79] as string), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(80));
    expect(missed.skipped).toBe(0);
    expect(c.calls).toEqual([{ limit: 100 }, { before: c.ids[150], limit: 100 }]);
  });

  test("exactly the bound: all of them, nothing skipped", async () => {
    const c = channel(200);
    const missed = await fetchMissed(query(200), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids);
    expect([missed.skipped, missed.skippedAtLeast]).toEqual([0, false]);
  });

  test("more than the bound: the newest ones, and the older ones counted as skipped", async () => {
    const c = channel(230);
    const missed = await fetchMissed(query(200), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(30));
    expect([missed.skipped, missed.skippedAtLeast]).toEqual([30, false]);
  });

  test("a small bound counts the rest of the page it read", async () => {
    const c = channel(40);
    const missed = await fetchMissed(query(3), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(37));
    expect([missed.skipped, missed.skippedAtLeast]).toEqual([37, false]);
    expect(c.calls).toHaveLength(1);
  });

  test("counting stops after SKIP_COUNT_PAGES more pages: a lower bound", async () => {
    const c = channel(2000);
    const missed = await fetchMissed(query(200, null, 48 * HOUR), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(-200));
    expect(c.calls).toHaveLength(2 + SKIP_COUNT_PAGES);
    expect([missed.skipped, missed.skippedAtLeast]).toEqual([SKIP_COUNT_PAGES * HISTORY_PAGE, true]);
  });

  test("a counting page that fails leaves a lower bound; a page of kept messages that fails throws", async () => {
    const counting = channel(400, { failFrom: 2 });
    const missed = await fetchMissed(query(200), counting.history);
    expect(missed.messages).toHaveLength(200);
    expect([missed.skipped, missed.skippedAtLeast]).toEqual([0, true]);
    const keeping = channel(400, { failFrom: 1 });
    await expect(fetchMissed(query(200), keeping.history)).rejects.toThrow("HTTPError 500");
  });

  test("nothing older than the age bound, even without a position", async () => {
    const c = channel(10);
    // Messages end a minute ago, one second apart: a 65 s bound keeps the last 4 or 5.
    const missed = await fetchMissed(query(200, null, 65_000), c.history);
    expect(missed.messages.length).toBeGreaterThan(0);
    expect(missed.messages.length).toBeLessThan(10);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(10 - missed.messages.length));
    expect(missed.skipped).toBe(0);
  });

  test("items that are not messages are dropped", async () => {
    const history = async () => [{ id: "not a snowflake" }, null, "x"];
    const missed = await fetchMissed(query(200), history);
    expect(missed).toEqual({ messages: [], skipped: 0, skippedAtLeast: false });
  });
});
