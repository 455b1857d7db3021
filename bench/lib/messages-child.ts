/**
 * Child process of a benchmark: Messages on chat.db. It creates the chat.db (lib/chatdb.ts: the friend's
 * and the stranger's chats, plus the chats of BENCH_CHATS, JSON [{guid, style, chatIdentifier,
 * participants}]) and keeps its connection open, so chat.db-wal and chat.db-shm exist as on a Mac where
 * Messages runs (WAL, `synchronous` left at SQLite's default, one transaction per message, as
 * openChatDbWriter writes); it commits nothing until told. idle.ts, load.ts and soak.ts run it.
 *
 *   BENCH_CHAT_DB=<path> [BENCH_CHATS='[…]'] bun run bench/lib/messages-child.ts
 *
 * Prints `{"ready":0,"rowid":<MAX(ROWID)>,"pid":…}`. Commands besides those of lib/child-protocol.ts:
 * - `{"cmd":"commit","text"[,"chatGuid","from"]}` → {rowid, tBegin, tCommit}: one message now (from the
 *   friend in the friend's chat unless given), its transaction's begin and commit on this process's clock;
 * - `{"cmd":"run","t0","rps","messages":[[chatGuid, from, text], …]}` → {written, lateMs: {p50, p99,
 *   max}, wallMs}: message k is written at t0 + k × 1000 / rps (this process's clock,
 *   lib/child-protocol.ts `now`), or at once when that instant has passed.
 */
import type { ChatSpec } from "../../src/demo/chatdb-writer.ts";
import { FRIEND, FRIEND_CHAT, openBenchChatDb } from "./chatdb.ts";
import { emit, now, serveCommands } from "./child-protocol.ts";
import { dist } from "./stats.ts";

const path = process.env.BENCH_CHAT_DB;
if (!path) {
  process.stderr.write("BENCH_CHAT_DB is required\n");
  process.exit(2);
}
const writer = openBenchChatDb(path);
for (const c of JSON.parse(process.env.BENCH_CHATS ?? "[]") as ChatSpec[]) writer.chat(c);
emit({ ready: 0, rowid: writer.maxRowid(), pid: process.pid });

await serveCommands(
  () => writer.close(),
  async (c) => {
    if (c.cmd === "commit") {
      const tBegin = now();
      const { rowid } = writer.message({
        chatGuid: c.chatGuid === undefined ? FRIEND_CHAT : String(c.chatGuid),
        from: c.from === undefined ? FRIEND : String(c.from),
        text: String(c.text),
      });
      return { rowid, tBegin, tCommit: now() };
    }
    if (c.cmd === "run") {
      const t0 = Number(c.t0);
      const gapMs = 1000 / Number(c.rps);
      const messages = c.messages as [string, string, string][];
      const late: number[] = [];
      for (let k = 0; k < messages.length; k++) {
        const due = t0 + k * gapMs;
        const wait = due - now();
        if (wait > 0) await Bun.sleep(wait);
        late.push(now() - due);
        const [chatGuid, from, text] = messages[k] as [string, string, string];
        writer.message({ chatGuid, from, text });
      }
      const d = dist(late);
      return { written: messages.length, lateMs: { p50: d.p50, p99: d.p99, max: d.max }, wallMs: now() - t0 };
    }
    return { error: `unknown command ${c.cmd}` };
  },
);
