/**
 * The hot queries must stay fast at 1,000,000 messages: each one must be answered by an index range
 * search in the order it returns (no full scan, no temporary sort). This pins the query plans of the
 * exact SQL the store runs; bench/store-queries.ts measures the latencies.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { CHANNEL_PAGE_SQL } from "../../src/store/channel-list.ts";
import {
  CONTEXT_AFTER_SQL,
  CONTEXT_BEFORE_SQL,
  QUARANTINE_BEFORE_SQL,
  QUARANTINE_SQL,
} from "../../src/store/messages.ts";
import { RUN_AT_OR_BEFORE_SQL, unreadCandidatesSql } from "../../src/store/reads.ts";
import { openStore } from "../../src/store/store.ts";
import { tempDir } from "../helpers/temp.ts";

const store = openStore(join(tempDir(), "gw.db"));

function plan(sql: string): string[] {
  const rows = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(
    // Bind any value: the plan does not depend on it. Named parameters get an object, numbered ones a list.
    ...(sql.includes("$")
      ? [
          Object.fromEntries(
            [...new Set(sql.match(/\$\w+/g))].map((p) => [
              p.slice(1),
              p === "$ts" || p === "$limit" ? 1 : "x",
            ]),
          ),
        ]
      : [1, 2, 3, 4, 5].slice(0, new Set(sql.match(/\?\d/g)).size)),
  ) as { detail: string }[];
  return rows.map((r) => r.detail);
}

function expectIndexed(sql: string, index: string, range: string, covering = false) {
  const p = plan(sql);
  const table = sql.includes("FROM messages m ") ? "m" : "messages";
  expect(p[0]).toBe(`SEARCH ${table} USING ${covering ? "COVERING " : ""}INDEX ${index} (${range})`);
  expect(p.join("\n")).not.toContain("SCAN");
  expect(p.join("\n")).not.toContain("TEMP B-TREE");
}

test.each([
  ["all", false, "messages_status_ts", "allowlist_status=? AND (message_ts,id)>(?,?)"],
  ["source", false, "messages_source_status_ts", "source=? AND allowlist_status=? AND (message_ts,id)>(?,?)"],
  [
    "channel",
    false,
    "messages_channel_status_ts",
    "channel_id=? AND allowlist_status=? AND (message_ts,id)>(?,?)",
  ],
  [
    "channel",
    true,
    "messages_channel_status_ts",
    "channel_id=? AND allowlist_status=? AND (message_ts,id)>(?,?)",
  ],
] as const)("unread candidates of scope %s (source too: %p) walk %s", (kind, alsoSource, index, range) => {
  // The scope's index walks the range in order (no sort); the page's rows are read from the table.
  expectIndexed(unreadCandidatesSql(kind, alsoSource), index, range);
  expectIndexed(
    unreadCandidatesSql(kind, alsoSource, true),
    index,
    range.replace("(message_ts,id)>(?,?)", "(message_ts,id)>(?,?) AND (message_ts,id)<(?,?)"),
  );
});

test("the read run covering a message is one primary-key search", () => {
  expect(plan(RUN_AT_OR_BEFORE_SQL)).toEqual([
    "SEARCH read_runs USING PRIMARY KEY (agent_id=? AND scope=? AND (start_ts,start_id)<(?,?))",
  ]);
});

test("context walks the channel index both ways", () => {
  expectIndexed(
    CONTEXT_BEFORE_SQL,
    "messages_channel_status_ts",
    "channel_id=? AND allowlist_status=? AND (message_ts,id)<(?,?)",
  );
  expectIndexed(
    CONTEXT_AFTER_SQL,
    "messages_channel_status_ts",
    "channel_id=? AND allowlist_status=? AND (message_ts,id)>(?,?)",
  );
});

test("quarantine walks the status index newest first", () => {
  expectIndexed(QUARANTINE_SQL, "messages_status_ts", "allowlist_status=? AND message_ts>?");
  expectIndexed(
    QUARANTINE_BEFORE_SQL,
    "messages_status_ts",
    "allowlist_status=? AND message_ts>? AND (message_ts,id)<(?,?)",
  );
});

test("single message and dedupe lookups use unique keys", () => {
  expect(plan("SELECT * FROM messages WHERE id = ?1")).toEqual(["SEARCH messages USING PRIMARY KEY (id=?)"]);
  expect(plan("SELECT id FROM messages WHERE source = ?1 AND platform_id = ?2")[0]).toContain(
    "USING COVERING INDEX messages_platform (source=? AND platform_id=?)",
  );
});

test.each([
  ["all", ["SEARCH l USING INDEX channel_list_recent (last_visible_at>?)"], []],
  ["source", ["SEARCH l USING INDEX channel_list_recent (last_visible_at>?)"], []],
  ["person", ["SEARCH l USING INDEX channel_list_person (person_id=?)"], ["USE TEMP B-TREE FOR ORDER BY"]],
] as const)(
  "the channel list (%s) walks its index (a person's few channels sorted after) and looks up reads by key",
  (filter, first, last) => {
    expect(plan(CHANNEL_PAGE_SQL(filter))).toEqual([
      ...first,
      "SEARCH r USING PRIMARY KEY (agent_id=? AND channel_id=?) LEFT-JOIN",
      ...last,
    ]);
  },
);
