/**
 * Child process of bench/load/load.ts: Messages writing chat.db. It creates the chat.db (lib/chatdb.ts schema)
 * with the chats of BENCH_CHATS (JSON: [{guid, style, chatIdentifier, participants}]), keeps its
 * connection open (WAL, `synchronous` left at SQLite's default, one transaction per message, as
 * openChatDbWriter writes) and writes inbound rows when told.
 *
 *   BENCH_CHAT_DB=<path> BENCH_CHATS='[…]' bun run bench/load/writer.ts
 *
 * Prints `{"ready":0,"pid":…}`. Commands besides those of lib/child-protocol.ts:
 * - `{"cmd":"commit","chatGuid","from","text"}` → {rowid}: one message now;
 * - `{"cmd":"run","t0","rps","messages":[[chatGuid, from, text], …]}` → {written, lateMs: {p50, p99,
 *   max}, wallMs}: message k is written at t0 + k × 1000 / rps (this process's clock,
 *   lib/child-protocol.ts `now`), or at once when that instant has passed.
 */
import type { ChatSpec } from "../../src/demo/chatdb-writer.ts";
import { openBenchChatDb } from "../lib/chatdb.ts";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";
import { dist } from "../lib/stats.ts";

const path = process.env.BENCH_CHAT_DB;
if (!path) {
  process.stderr.write("BENCH_CHAT_DB is required\n");
  process.exit(2);
}
const writer = openBenchChatDb(path);
for (const c of JSON.parse(process.env.BENCH_CHATS ?? "[]") as ChatSpec[]) writer.chat(c);
emit({ ready: 0, pid: process.pid });

await serveCommands(
  () => writer.close(),
  async (c) => {
    if (c.cmd === "commit") {
      const { rowid } = writer.message({
        chatGuid: String(c.chatGuid),
        from: String(c.from),
        text: String(c.text),
      });
      return { rowid };
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
