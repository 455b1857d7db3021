import { describe, expect, test } from "bun:test";
import { fetchMissed } from "../../src/connectors/community-chat/catch-up.ts";
import { snowflakeAt } from "../../src/connectors/community-chat/snowflake.ts";

const NOW = Date.UTC(2026, 10, 24, 12);
/** A channel history of `n` messages one second apart, ending a minute ago, answered as Discord does. */
function channel(n: number) {
  const ids = Array.from({ length: n }, (_, i) => snowflakeAt(NOW - 60_000 - (n - i) * 1000));
  const calls: { after: string; limit: number }[] = [];
  const history = async (_channel: string, after: string, limit: number) => {
    calls.push({ after, limit });
    const page = ids.filter((id) => BigInt(id) > BigInt(after)).slice(0, limit);
    return page.reverse().map((id) => ({
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
const query = (maxMessages: number) => ({
  discordChannelId: "c1",
  position: null,
  maxMessages,
  maxAgeMs: 24 * 3_600_000,
  now: NOW,
});

describe("fetchMissed", () => {
  test("fewer than the bound: all of them, oldest first, not truncated", async () => {
    const c = channel(150);
    const missed = await fetchMissed(query(200), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids);
    expect(missed.truncated).toBe(false);
  });

  test("exactly the bound: all of them, and not reported as truncated", async () => {
    const c = channel(200);
    const missed = await fetchMissed(query(200), c.history);
    expect(missed.messages).toHaveLength(200);
    expect(missed.truncated).toBe(false);
    expect(c.calls.at(-1)).toEqual({ after: c.ids[199] as string, limit: 1 });
  });

  test("more than the bound: the first ones, truncated", async () => {
    const c = channel(201);
    const missed = await fetchMissed(query(200), c.history);
    expect(missed.messages.map((m) => m.id)).toEqual(c.ids.slice(0, 200));
    expect(missed.truncated).toBe(true);
  });
});
