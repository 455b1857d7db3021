/**
 * Child process of bench/idle/idle.ts: Messages holding chat.db open. It creates the chat.db (lib/chatdb.ts)
 * and keeps its connection open, so chat.db-wal and chat.db-shm exist as on a Mac where Messages runs,
 * and commits nothing until asked.
 *
 *   BENCH_CHAT_DB=<path> bun run bench/idle/writer.ts
 *
 * Prints `{"ready":0,"rowid":<MAX(ROWID)>}`; `{"cmd":"commit","text":…}` writes one message from the
 * friend (one transaction) and answers `{"rowid","tBegin","tCommit"}` (lib/child-protocol.ts clock);
 * the other commands of lib/child-protocol.ts are answered too.
 */

import { FRIEND, FRIEND_CHAT, openBenchChatDb } from "../lib/chatdb.ts";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const path = process.env.BENCH_CHAT_DB;
if (!path) {
  process.stderr.write("BENCH_CHAT_DB is required\n");
  process.exit(2);
}
const writer = openBenchChatDb(path);
emit({ ready: 0, rowid: writer.maxRowid(), pid: process.pid });
await serveCommands(
  () => writer.close(),
  (c) => {
    if (c.cmd !== "commit") return { error: `unknown command ${c.cmd}` };
    const tBegin = now();
    const { rowid } = writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: String(c.text) });
    return { rowid, tBegin, tCommit: now() };
  },
);
