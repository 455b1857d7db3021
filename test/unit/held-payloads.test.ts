import { expect, test } from "bun:test";
import type { CatchUpTask } from "../../src/connectors/community-chat/catch-up-plan.ts";
import { createHeldPayloads } from "../../src/connectors/community-chat/held-payloads.ts";
import { recordingLogger } from "../helpers/logger.ts";

function held(max: number, catchUpOn = true) {
  const queued: { channelId: string; make: () => CatchUpTask | null }[] = [];
  const log = recordingLogger();
  const h = createHeldPayloads({
    max,
    log,
    runWhenDue: (channelId, _how, make) => {
      if (!catchUpOn) return false;
      queued.push({ channelId, make });
      return true;
    },
  });
  return { h, queued, log };
}

test("messages past the bound are dropped; one refill per channel, from just before the first dropped", () => {
  const { h, queued } = held(2);
  expect(h.takeMessage("c:1", "channel", "1", "100")).toBe(true);
  expect(h.takeMessage("c:1", "channel", "1", "101")).toBe(true);
  expect(h.takeMessage("c:1", "channel", "1", "105")).toBe(false);
  expect(h.takeMessage("c:1", "channel", "1", "103")).toBe(false);
  expect(h.takeMessage("c:2", "dm", "2", "104")).toBe(false);
  expect(h.held()).toBe(2);
  expect(h.dropped()).toEqual({ messages: 3, reactions: 0 });
  expect(queued.map((q) => q.channelId)).toEqual(["c:1", "c:2"]);
  expect(queued[0]?.make()).toEqual({
    channelId: "c:1",
    kind: "channel",
    discordChannelId: "1",
    position: "102",
  });
  // Taken: a drop after that queues a new refill; the old task has nothing left to do.
  expect(queued[0]?.make()).toBeNull();
  expect(h.takeMessage("c:1", "channel", "1", "106")).toBe(false);
  expect(queued.map((q) => q.channelId)).toEqual(["c:1", "c:2", "c:1"]);
  expect(queued[2]?.make()?.position).toBe("105");
  h.release();
  expect(h.takeMessage("c:1", "channel", "1", "107")).toBe(true);
});

test("reactions past the bound are dropped; edits and deletes are always held and counted", () => {
  const { h } = held(1);
  expect(h.takeReaction()).toBe(true);
  expect(h.takeReaction()).toBe(false);
  h.hold();
  expect(h.held()).toBe(2);
  expect(h.takeMessage("c:1", "channel", "1", "100")).toBe(false);
  expect(h.dropped()).toEqual({ messages: 1, reactions: 1 });
  h.release();
  h.release();
  expect(h.held()).toBe(0);
});

test("with catch-up off a dropped message is said to be lost, once per drop", () => {
  const { h, log } = held(0, false);
  expect(h.takeMessage("c:1", "channel", "1", "100")).toBe(false);
  expect(log.entries.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
    expect.stringContaining("catch-up is off"),
  ]);
});
