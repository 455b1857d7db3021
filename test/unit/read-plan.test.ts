/** The iMessage reader's plan for one read: backfill fence, pending attachments, chat order, chat joins. */
import { describe, expect, test } from "bun:test";
import type { ChatDbRow } from "../../src/connectors/device-messenger/chat-db.ts";
import { FUTURE_SLACK_MS, planRead, type RowInput } from "../../src/connectors/device-messenger/plan.ts";
import { chatDbRow } from "../helpers/chatdb-row.ts";

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const MIN = 60_000;

function input(rowid: number, over: Partial<ChatDbRow> = {}, more: Partial<RowInput> = {}): RowInput {
  const row = chatDbRow(rowid, NOW - MIN, over);
  return { row, attachments: [], text: row.text, announced: 0, ready: true, ...more };
}

const base = { waiting: [], pending: [], now: NOW, fenceMs: 15 * MIN, waitMs: 60_000 };
const rowids = (xs: { input: RowInput }[]) => xs.map((x) => x.input.row.rowid);

describe("backfill fence", () => {
  test("a new row dated more than the fence before the high-water date is fenced; the cursor passes it", () => {
    const plan = planRead({
      ...base,
      highWater: NOW - MIN,
      fresh: [
        input(10, { date_ms: NOW - 90 * 24 * 60 * MIN }),
        input(11, { date_ms: NOW - 17 * MIN }),
        input(12, { date_ms: NOW - 14 * MIN }),
        input(13, { date_ms: NOW }),
      ],
    });
    expect(plan.fenced.map((r) => r.rowid)).toEqual([10, 11]);
    expect(rowids(plan.deliver)).toEqual([12, 13]);
    expect(plan.cursor).toBe(13);
    expect(plan.highWater).toBe(NOW);
  });

  test("rows newer than the mark (downtime catch-up) are all delivered; 0 turns the fence off", () => {
    const fresh = [input(1, { date_ms: NOW - 600 * MIN }), input(2, { date_ms: NOW - 500 * MIN })];
    expect(rowids(planRead({ ...base, highWater: NOW - 700 * MIN, fresh }).deliver)).toEqual([1, 2]);
    expect(rowids(planRead({ ...base, fenceMs: 0, highWater: NOW, fresh }).deliver)).toEqual([1, 2]);
  });

  test("a row from a clock far in the future cannot lift the mark beyond now + slack", () => {
    const plan = planRead({
      ...base,
      highWater: NOW - MIN,
      fresh: [input(1, { date_ms: NOW + 365 * 24 * 60 * MIN }), input(2, { date_ms: NOW - 2 * MIN })],
    });
    expect(plan.highWater).toBe(NOW + FUTURE_SLACK_MS);
    expect(rowids(plan.deliver)).toEqual([1, 2]);
  });

  test("rows that are not messages (reactions) are not counted as fenced", () => {
    const plan = planRead({
      ...base,
      highWater: NOW,
      fresh: [input(1, { date_ms: NOW - 60 * MIN, associated_message_type: 2000 })],
    });
    expect(plan.fenced).toEqual([]);
    expect(plan.deliver).toEqual([]);
    expect(plan.cursor).toBe(1);
  });
});

describe("attachments that arrive late", () => {
  test("a message whose attachments are not ready waits, and so does every later one of its chat", () => {
    const plan = planRead({
      ...base,
      highWater: null,
      fresh: [
        input(1, {}, { ready: false, announced: 1 }),
        input(2),
        input(3, { chat_guid: "any;-;+15555550199", chat_identifier: "+15555550199" }),
      ],
    });
    expect(plan.pending).toEqual([
      { rowid: 1, since: NOW },
      { rowid: 2, since: NOW },
    ]);
    expect(rowids(plan.deliver)).toEqual([3]);
    expect(plan.cursor).toBe(3);
  });

  test("a waiting message goes out once ready, or after the wait without its attachments (late), in order", () => {
    const pending = [
      { rowid: 1, since: NOW - 61_000 },
      { rowid: 2, since: NOW - 61_000 },
      { rowid: 5, since: NOW - 1_000 },
    ];
    const plan = planRead({
      ...base,
      highWater: NOW,
      pending,
      waiting: [
        input(1, {}, { ready: false }),
        input(2, {}, { ready: true }),
        input(5, { chat_guid: "other" }, { ready: false }),
      ],
      fresh: [input(6), input(7, { chat_guid: "other" })],
    });
    expect(plan.deliver.map((d) => [d.input.row.rowid, d.late])).toEqual([
      [1, true],
      [2, false],
      [6, false],
    ]);
    expect(plan.pending).toEqual([
      { rowid: 5, since: NOW - 1_000 },
      { rowid: 7, since: NOW },
    ]);
  });

  test("an empty-text message with an announced attachment not joined yet is a message, not an empty row", () => {
    const plan = planRead({
      ...base,
      highWater: null,
      fresh: [input(1, { text: "\uFFFC" }, { text: "", announced: 1, ready: false })],
    });
    expect(plan.pending.map((p) => p.rowid)).toEqual([1]);
  });
});

describe("chat joins", () => {
  test("a row waiting for its chat join holds the read there", () => {
    const plan = planRead({
      ...base,
      highWater: null,
      fresh: [input(1), input(2, { chat_guid: null }, { holdForChat: true }), input(3)],
    });
    expect(rowids(plan.deliver)).toEqual([1]);
    expect(plan.cursor).toBe(1);
    expect(plan.held).toBe(true);
  });
});
