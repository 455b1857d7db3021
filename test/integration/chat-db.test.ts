/** The read-only chat.db reader: exact Apple-epoch dates, missing columns, never writing. */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { openChatDb } from "../../src/connectors/device-messenger/chat-db.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { tempDir } from "../helpers/temp.ts";

function chatDb() {
  const dir = join(tempDir(), "Messages");
  mkdirSync(dir);
  const path = join(dir, "chat.db");
  const w = openChatDbWriter(path);
  w.chat({
    guid: "any;-;+15555550100",
    style: 45,
    chatIdentifier: "+15555550100",
    participants: ["+15555550100"],
  });
  /** A message from +15555550100 in that one-to-one chat. */
  const say = (
    text: string,
    more: Omit<Parameters<typeof w.message>[0], "chatGuid" | "from" | "text"> = {},
  ) => w.message({ chatGuid: "any;-;+15555550100", from: "+15555550100", text, ...more });
  return { path, w, say };
}

test("nanosecond dates above 2^53 and legacy second dates convert to exact milliseconds (chatdb.md §3)", () => {
  const { path, w, say } = chatDb();
  say("ns", { dateNs: 738936000123456789n });
  const legacy = say("s");
  w.db.run("UPDATE message SET date = 738936000 WHERE ROWID = ?1", [legacy.rowid]);
  const rows = openChatDb(path).rowsAfter(0);
  expect(rows.map((r) => r.date_ms)).toEqual([1717243200123, 1717243200000]);
  expect(rows[0]?.date_raw).toBe("738936000123456789");
});

test("a file without optional columns reads them as NULL; the reader never changes the file", () => {
  const { path, w, say } = chatDb();
  say("hello", { threadOriginatorGuid: null });
  w.close();
  const raw = new Database(path);
  raw.run("DROP INDEX IF EXISTS message_idx_thread_originator_guid");
  raw.run("ALTER TABLE message DROP COLUMN thread_originator_guid");
  raw.run("PRAGMA wal_checkpoint(TRUNCATE)");
  raw.close();
  const before = statSync(path).mtimeMs;
  const db = openChatDb(path);
  const [row] = db.rowsAfter(0);
  expect(row).toMatchObject({ text: null, thread_originator_guid: null, chat_identifier: "+15555550100" });
  db.close();
  expect(statSync(path).mtimeMs).toBe(before);
});
