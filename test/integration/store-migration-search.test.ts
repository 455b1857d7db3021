/**
 * The search migration on a database the previous gw wrote: messages of every status (allowed, outbound,
 * quarantined, deleted) are stored, the migration indexes exactly the visible ones in chunks reporting
 * progress, and from then on the message store's writes keep the index in step. Also the progress
 * log's pacing.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { progressLogger } from "../../src/store/migration-progress.ts";
import { BACKFILL_CHUNK, INDEXING_TASK, SEARCH_MIGRATION } from "../../src/store/migration-search.ts";
import type { MigrationProgress } from "../../src/store/migration-types.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { openDatabase } from "../../src/store/open.ts";
import { openStore } from "../../src/store/store.ts";
import { recordingLogger } from "../helpers/logger.ts";
import { manualClock } from "../helpers/messages.ts";
import { tempDir } from "../helpers/temp.ts";

const VERSION = MIGRATIONS.indexOf(SEARCH_MIGRATION) + 1;
const STATUSES = ["allowed", "outbound", "unknown", "deleted"] as const;

/** A database at the version before search, `n` messages cycling through the four statuses. */
function databaseBeforeSearch(path: string, n: number): void {
  const db = openDatabase(path, { migrations: MIGRATIONS.slice(0, VERSION - 1), name: "old" });
  const insert = db.prepare(
    `INSERT INTO messages (id, source, platform_id, channel_id, channel_type, sender_id, sender_name, person_id,
       text, reply_to, message_ts, direction, allowlist_status, raw, created_at)
     VALUES (?1, ?2, ?1, ?3, 'dm', 's', 'S', NULL, ?4, NULL, ?5, ?6, ?7, '{}', ?5)`,
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const status = STATUSES[i % 4] as (typeof STATUSES)[number];
      const text = status === "deleted" ? "" : `common word${i} ${status}`;
      const direction = status === "outbound" ? "outbound" : "inbound";
      const source = i % 3 === 0 ? "community_chat" : "device_messenger";
      insert.run(
        `msg_${String(i).padStart(26, "0")}`,
        source,
        `ch${i % 5}`,
        text,
        1000 + i,
        direction,
        status,
      );
    }
  })();
  db.close();
}

test("indexes exactly the visible messages, in chunks with progress; later writes keep it in step", () => {
  const path = join(tempDir(), "gw.db");
  const n = 2 * BACKFILL_CHUNK * 2 + 8; // 40,004 visible
  databaseBeforeSearch(path, n);
  const reports: Parameters<MigrationProgress>[0][] = [];
  const store = openStore(path, { onProgress: (p) => reports.push(p) });
  try {
    const q = (sql: string) => store.db.query(sql).all();
    expect(q("PRAGMA user_version")).toEqual([{ user_version: MIGRATIONS.length }]);
    const visible = n / 2;
    expect(reports).toEqual([
      { task: INDEXING_TASK, done: BACKFILL_CHUNK, total: visible },
      { task: INDEXING_TASK, done: 2 * BACKFILL_CHUNK, total: visible },
      { task: INDEXING_TASK, done: visible, total: visible },
    ]);
    const find = (words: string, limit = 100) =>
      store.search.search({ q: words, source: null, channelId: null, limit }).map((m) => m.allowlist_status);
    expect(find("word0")).toEqual(["allowed"]);
    expect(find("word1")).toEqual(["outbound"]);
    expect(find("word2 unknown")).toEqual([]);
    expect(find("word3")).toEqual([]);
    expect(find("unknown")).toEqual([]);
    expect(find("common", 100)).toHaveLength(100);
    expect(new Set(find("common", 100))).toEqual(new Set(["allowed", "outbound"]));
    // Newest first when no word ranks: "common" is in every visible message.
    expect(
      store.search.search({ q: "common", source: null, channelId: null, limit: 2 }).map((m) => m.id),
    ).toEqual([`msg_${String(n - 3).padStart(26, "0")}`, `msg_${String(n - 4).padStart(26, "0")}`]);
    const stranger = store.messages.get(`msg_${String(2).padStart(26, "0")}`);
    expect(stranger?.allowlist_status).toBe("unknown");
    expect(q("SELECT count(*) AS n FROM message_search_rows")).toEqual([{ n: visible }]);
    expect(q("PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    // The message store's writes: an edit re-indexes, a tombstone leaves the index.
    store.messages.setText(`msg_${String(0).padStart(26, "0")}`, "rewritten");
    expect(find("word0")).toEqual([]);
    expect(find("rewritten")).toEqual(["allowed"]);
    store.messages.markDeleted(`msg_${String(0).padStart(26, "0")}`);
    expect(find("rewritten")).toEqual([]);
  } finally {
    store.close();
  }
});

test("an empty store migrates without a progress report", () => {
  const path = join(tempDir(), "gw.db");
  databaseBeforeSearch(path, 0);
  const reports: unknown[] = [];
  openStore(path, { onProgress: (p) => reports.push(p) }).close();
  expect(reports).toEqual([]);
});

test("progress lines: at most one every 2 s of the clock, none before the first 2 s", () => {
  const clock = manualClock();
  const log = recordingLogger();
  const report = progressLogger(log, clock);
  const step = (advanceMs: number, done: number) => {
    clock.advance(advanceMs);
    report({ task: INDEXING_TASK, done, total: 1_000_000 });
  };
  step(500, 100_000);
  step(1499, 200_000);
  step(1, 300_000);
  step(1000, 400_000);
  step(999, 500_000);
  step(1, 600_000);
  step(5000, 1_000_000);
  expect(log.entries.map((e) => [e.level, e.msg])).toEqual([
    ["info", "indexing messages for search: 300,000 of 1,000,000"],
    ["info", "indexing messages for search: 600,000 of 1,000,000"],
    ["info", "indexing messages for search: 1,000,000 of 1,000,000"],
  ]);
  expect(log.entries[0]?.obj).toEqual({ task: INDEXING_TASK, done: 300_000, total: 1_000_000 });
});
