/**
 * `gw mcp --channel` facing a full long-poll table (extensions.md §4 "Bounded under faults"), driven by the
 * official MCP client over stdio against the real service over HTTP: with LONG_POLL_MAX_WAITERS unread and
 * events polls parked, its two followers get 503 SERVICE_BUSY and wait Retry-After (jittered) instead of
 * asking again at once: a handful of requests in a 3 s window, where an empty 200 made them spin by the
 * thousand. Once places free up the channel pushes again.
 */
import { afterAll, expect, test } from "bun:test";
import { systemClock } from "../../src/core/ports.ts";
import { busyRetryAfterS } from "../../src/http/long-poll-busy.ts";
import { WAIT_S } from "../../src/mcp/channel.ts";
import { LONG_POLL_MAX_WAITERS } from "../../src/service.ts";
import { closeAll, connectMcp } from "../helpers/mcp-client.ts";
import { waitFor } from "../helpers/process.ts";
import { AUTH, inbound, serveOverHttp, TOKEN, testService } from "../helpers/service.ts";

/** The window the requests are counted in, and the most each follower may make in it. */
const WINDOW_MS = 3_000;
const MOST_PER_WINDOW = 3;

const t = await testService({ clock: systemClock });
/** What the followers asked for, by path, with the status they got. */
const seen: { path: string; status: number; at: number }[] = [];
const server = serveOverHttp(t.svc.app, (req, res) => {
  seen.push({ path: new URL(req.url).pathname, status: res.status, at: performance.now() });
  return undefined;
});

/** Held polls of other agents, parked straight on the app; aborting one gives its place back. */
const parked = new AbortController();
const park = (path: string) =>
  Array.from({ length: LONG_POLL_MAX_WAITERS }, (_, i) =>
    t.svc.app
      .handle(
        new Request(`http://localhost${path}`, {
          headers: { ...AUTH, "x-agent-id": `parked-${i}` },
          signal: parked.signal,
        }),
      )
      .catch(() => undefined),
  );
const held = [...park("/messages/unread?wait=60"), ...park("/events?wait=60")];
await waitFor(
  () =>
    t.svc.arrivals.waiting() === LONG_POLL_MAX_WAITERS &&
    t.svc.eventArrivals.waiting() === LONG_POLL_MAX_WAITERS
      ? true
      : undefined,
  "both long-poll tables full",
);

afterAll(async () => {
  await closeAll();
  parked.abort();
  await Promise.all(held);
  server.stop();
});

const count = (path: string, from: number, to: number) =>
  seen.filter((s) => s.path === path && s.at >= from && s.at < to).length;

test("its followers back off on 503 SERVICE_BUSY, bounded by Retry-After, then push again once places free", async () => {
  const mcp = await connectMcp(["--channel"], {
    GW_BEARER_TOKEN: TOKEN,
    GW_AGENT_ID: "claude-code",
    GW_BASE_URL: server.url,
  });
  // Both followers have asked once.
  await waitFor(
    () => (["/messages/unread", "/events"].every((p) => seen.some((s) => s.path === p)) ? true : undefined),
    "a first request of each follower",
  );
  const from = performance.now();
  await Bun.sleep(WINDOW_MS); // The measurement itself: a fixed window, not a wait for an outcome.
  const to = performance.now();
  const unread = count("/messages/unread", from, to);
  const events = count("/events", from, to);
  expect(unread).toBeLessThanOrEqual(MOST_PER_WINDOW);
  expect(events).toBeLessThanOrEqual(MOST_PER_WINDOW);
  // Every answer they got while the tables were full was the refusal, never an empty 200.
  const followers = seen.filter((s) => s.path === "/messages/unread" || s.path === "/events");
  expect(followers.every((s) => s.status === 503)).toBe(true);
  // Consecutive tries of one follower are at least the Retry-After apart.
  const unreadAt = seen.filter((s) => s.path === "/messages/unread").map((s) => s.at);
  for (let i = 1; i < unreadAt.length; i++)
    expect((unreadAt[i] as number) - (unreadAt[i - 1] as number)).toBeGreaterThanOrEqual(
      busyRetryAfterS(WAIT_S) * 1000 - 50,
    );
  expect(mcp.stderr()).toContain("gw serve answered 503; retrying");

  // Places free up: the next try is held, and a new message is pushed.
  parked.abort();
  await Promise.all(held);
  t.seed([inbound({ text: "after the crowd", timestampMs: Date.now() })]);
  await waitFor(
    () => (mcp.pushed.some((p) => p.content === "after the crowd") ? true : undefined),
    "the message pushed once the table has room",
    15_000,
  );
});
