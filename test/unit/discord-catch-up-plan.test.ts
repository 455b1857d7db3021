/**
 * The pure parts of Discord catch-up: choosing what to fetch and from where, and the connected mark
 * (reading a GUILD_CREATE is in discord-guild-channels.test.ts).
 */
import { describe, expect, test } from "bun:test";
import {
  knownTask,
  planDm,
  planGuild,
  startingMark,
} from "../../src/connectors/community-chat/catch-up-plan.ts";
import { createConnectedMark, nextMark } from "../../src/connectors/community-chat/connected-mark.ts";
import { snowflakeAt, snowflakeTime } from "../../src/connectors/community-chat/snowflake.ts";
import type { IngestBatch } from "../../src/ingest/ingest.ts";
import type { ChannelRow } from "../../src/store/channels.ts";
import { recordingLogger } from "../helpers/logger.ts";

const NOW = Date.UTC(2026, 10, 24, 12);
const HOUR = 3_600_000;
/** Channel ids 910000000000000001… */
const ch = (n: number) => String(910000000000000000n + BigInt(n));

const row = (id: string, cursor: string | null): ChannelRow => ({
  id,
  source: "community_chat",
  channel_type: id.includes(":dm:") ? "dm" : "group",
  platform_ref: id.split(":").at(-1) as string,
  first_inbound_at: 0,
  last_inbound_at: 0,
  cursor,
});

describe("planGuild", () => {
  const since = snowflakeAt(NOW - HOUR);
  const ageFloor = snowflakeAt(NOW - 24 * HOUR);
  const at = (ms: number) => snowflakeAt(ms);
  const info = (n: number, last: string | null, readableToo = true) => ({
    id: ch(n),
    lastMessageId: last,
    readable: readableToo,
  });
  const known = new Map(
    [
      row(`community_chat:channel:${ch(1)}`, at(NOW - 2 * HOUR)),
      row(`community_chat:channel:${ch(2)}`, at(NOW - 2 * HOUR)),
    ].map((r) => [r.id, r]),
  );

  test("known channels from their position, new ones from the mark; quiet and unreadable ones are not asked", () => {
    const plan = planGuild({
      channels: [
        info(1, at(NOW - 90 * 60_000)), // known, newer than its position (not than the mark): fetched
        info(2, at(NOW - 2 * HOUR)), // known, nothing newer: quiet
        info(3, at(NOW - 30 * 60_000)), // new, newer than the mark
        info(4, at(NOW - 2 * HOUR)), // new, older than the mark: quiet
        info(5, null), // new, empty: quiet
        info(6, at(NOW - 60_000), false), // new, unreadable
      ],
      known,
      since,
      ageFloor,
    });
    expect(plan.tasks).toEqual([
      {
        channelId: `community_chat:channel:${ch(1)}`,
        kind: "channel",
        discordChannelId: ch(1),
        position: at(NOW - 2 * HOUR),
      },
      {
        channelId: `community_chat:channel:${ch(3)}`,
        kind: "channel",
        discordChannelId: ch(3),
        position: since,
      },
    ]);
    expect([plan.quiet, plan.unreadable]).toEqual([3, 1]);
    expect(plan.covered).toEqual([`community_chat:channel:${ch(1)}`, `community_chat:channel:${ch(2)}`]);
  });

  test("a known channel the bot can no longer read is covered and not asked", () => {
    const plan = planGuild({ channels: [info(1, at(NOW - 60_000), false)], known, since, ageFloor });
    expect([plan.tasks, plan.unreadable, plan.covered]).toEqual([[], 1, [`community_chat:channel:${ch(1)}`]]);
  });

  test("nothing newer than the age bound is nothing to fetch", () => {
    const plan = planGuild({
      channels: [info(3, at(NOW - 30 * HOUR))],
      known,
      since: at(NOW - 48 * HOUR),
      ageFloor,
    });
    expect([plan.tasks, plan.quiet]).toEqual([[], 1]);
  });

  test("first start (no mark): known channels still caught up, new ones not imported", () => {
    const plan = planGuild({
      channels: [info(1, at(NOW - 60_000)), info(3, at(NOW - 60_000))],
      known,
      since: null,
      ageFloor,
    });
    expect(plan.tasks.map((t) => t.discordChannelId)).toEqual([ch(1)]);
    expect(plan.quiet + plan.unreadable).toBe(0);
  });
});

describe("planDm", () => {
  const since = snowflakeAt(NOW - HOUR);
  const ageFloor = snowflakeAt(NOW - 24 * HOUR);
  const dm = (id: string, last: string | null) => ({ id, type: 1, last_message_id: last, recipients: [] });
  const knownDm = new Map([[`community_chat:dm:${ch(7)}`, row(`community_chat:dm:${ch(7)}`, null)]]);

  test("a new DM with something after the mark is fetched from the mark", () => {
    expect(planDm({ answer: dm(ch(8), snowflakeAt(NOW - 60_000)), known: knownDm, since, ageFloor })).toEqual(
      {
        what: "fetch",
        task: {
          channelId: `community_chat:dm:${ch(8)}`,
          kind: "dm",
          discordChannelId: ch(8),
          position: since,
        },
      },
    );
  });

  test("quiet, known, first start and malformed answers fetch nothing", () => {
    const fresh = snowflakeAt(NOW - 60_000);
    expect(planDm({ answer: dm(ch(8), null), known: knownDm, since, ageFloor }).what).toBe("quiet");
    expect(
      planDm({ answer: dm(ch(8), snowflakeAt(NOW - 2 * HOUR)), known: knownDm, since, ageFloor }).what,
    ).toBe("quiet");
    expect(planDm({ answer: dm(ch(7), fresh), known: knownDm, since, ageFloor }).what).toBe("known");
    expect(planDm({ answer: dm(ch(8), fresh), known: knownDm, since: null, ageFloor }).what).toBe("quiet");
    for (const answer of [null, "x", { id: ch(8), type: 0 }, { id: "nope", type: 1 }])
      expect(planDm({ answer, known: knownDm, since, ageFloor }).what).toBe("invalid");
  });
});

describe("startingMark and knownTask", () => {
  test("the stored mark, else the newest known position, else nothing (first start)", () => {
    const rows = [
      row("community_chat:channel:1", "300"),
      row("community_chat:dm:2", "1200"),
      row("x:y", null),
    ];
    expect(startingMark("500", rows)).toBe("500");
    expect(startingMark(null, rows)).toBe("1200");
    expect(startingMark(null, [])).toBeNull();
  });

  test("a known row becomes a task from its position", () => {
    expect(knownTask(row("community_chat:dm:42", "77"))).toEqual({
      channelId: "community_chat:dm:42",
      kind: "dm",
      discordChannelId: "42",
      position: "77",
    });
    expect(knownTask(row("device_messenger:x", null))).toBeNull();
  });
});

describe("nextMark", () => {
  const q = { now: NOW, lastAckAt: NOW - 10_000, marginMs: 120_000, oldestUnsettled: null };
  test("the first mark is now; later ones the last acknowledged heartbeat less the margin", () => {
    expect(nextMark({ ...q, stored: null })).toBe(snowflakeAt(NOW));
    expect(nextMark({ ...q, stored: snowflakeAt(NOW - HOUR) })).toBe(snowflakeAt(NOW - 130_000));
    expect(nextMark({ ...q, lastAckAt: NOW + 5_000, stored: snowflakeAt(NOW - HOUR) })).toBe(
      snowflakeAt(NOW - 120_000),
    );
  });

  test("never moves back, and waits for a first heartbeat acknowledgement", () => {
    expect(nextMark({ ...q, stored: snowflakeAt(NOW) })).toBeNull();
    expect(nextMark({ ...q, lastAckAt: null, stored: snowflakeAt(NOW - HOUR) })).toBeNull();
  });

  test("stays before a message received but not yet stored", () => {
    const pending = snowflakeAt(NOW - 5 * 60_000);
    const mark = nextMark({ ...q, stored: snowflakeAt(NOW - HOUR), oldestUnsettled: pending });
    expect(BigInt(mark as string)).toBe(BigInt(pending) - 1n);
    expect(snowflakeTime(mark as string)).toBeLessThan(snowflakeTime(pending));
    // A pending message newer than the mark changes nothing.
    expect(nextMark({ ...q, stored: snowflakeAt(NOW - HOUR), oldestUnsettled: snowflakeAt(NOW) })).toBe(
      snowflakeAt(NOW - 130_000),
    );
    // Nor when it is before the stored mark: the mark stays.
    expect(
      nextMark({ ...q, stored: snowflakeAt(NOW - HOUR), oldestUnsettled: snowflakeAt(NOW - 2 * HOUR) }),
    ).toBeNull();
  });
});

describe("createConnectedMark", () => {
  function setUp(stored: string | null) {
    let now = NOW;
    let canAdvance = true;
    let mark = stored;
    const written: string[] = [];
    const m = createConnectedMark({
      read: () => mark,
      clock: { now: () => now },
      log: recordingLogger(),
      everyMs: 3_600_000,
      marginMs: 0,
      canAdvance: () => canAdvance,
      lastAckAt: () => now,
    });
    m.start((batch: IngestBatch) => {
      expect(batch).toEqual({ source: "community_chat", messages: [], cursor: expect.any(String) });
      mark = batch.cursor;
      written.push(batch.cursor as string);
      return [];
    });
    return {
      m,
      written,
      tick: (ms: number) => {
        now += ms;
      },
      block: (v: boolean) => {
        canAdvance = !v;
      },
    };
  }

  test("written through ingest as a cursor only when it may move; held before what is not stored", () => {
    const t = setUp(snowflakeAt(NOW - HOUR));
    t.m.refresh();
    expect(t.written).toEqual([snowflakeAt(NOW)]);
    t.block(true);
    t.tick(1_000);
    t.m.refresh();
    expect(t.written).toHaveLength(1);
    t.block(false);
    const pending = snowflakeAt(NOW + 500);
    t.m.received(pending);
    t.m.refresh();
    expect(t.written.at(-1)).toBe((BigInt(pending) - 1n).toString());
    t.m.settled(pending);
    t.m.refresh();
    expect(t.written.at(-1)).toBe(snowflakeAt(NOW + 1_000));
  });

  test("once a stop began only the closing write may move it, with what was true when the stop began", () => {
    const t = setUp(snowflakeAt(NOW - HOUR));
    const store = t.m.closing();
    t.tick(5_000);
    t.m.refresh();
    expect(t.written).toEqual([]);
    store();
    expect(t.written).toEqual([snowflakeAt(NOW)]);
    t.m.refresh();
    expect(t.written).toHaveLength(1);
  });

  test("a stop that began while it could not move stores nothing", () => {
    const t = setUp(snowflakeAt(NOW - HOUR));
    t.block(true);
    const store = t.m.closing();
    t.block(false);
    store();
    expect(t.written).toEqual([]);
  });
});
