/**
 * Child process of bench/backlog/backlog.ts: the raw copy that catch-up is compared with.
 *
 *   bun run bench/backlog/raw.ts <chat.db> <after ROWID> <store path>
 *
 * Reads the rows after <after ROWID> with the same query gw uses (openChatDb().rowsAfter, BATCH_ROWS at a
 * time) and writes them into a fresh store with gw's schema and pragmas (openStore: the same tables and
 * indexes, WAL, synchronous=FULL): one transaction per batch with the same message inserts, one channel
 * upsert per channel and the cursor, and the same `raw` column (rawOf, the payload gw keeps). No gw
 * logic: no decoding, classification, allowlist, attachment staging or read-run maintenance.
 * Prints `{"rows","ms"}` and exits.
 */
import { BATCH_ROWS, openChatDb } from "../../src/connectors/device-messenger/chat-db.ts";
import { rawOf } from "../../src/connectors/device-messenger/rows.ts";
import { openStore } from "../../src/store/store.ts";

const [chatDbPath, afterArg, storePath] = process.argv.slice(2);
if (!chatDbPath || !afterArg || !storePath) {
  process.stderr.write("usage: bun run bench/backlog/raw.ts <chat.db> <after ROWID> <store path>\n");
  process.exit(2);
}
const chat = openChatDb(chatDbPath);
const store = openStore(storePath);
let cursor = Number(afterArg);
let rows = 0;
let n = 0;
const t0 = performance.now();
for (;;) {
  const batch = chat.rowsAfter(cursor, BATCH_ROWS);
  if (batch.length === 0) break;
  const now = Date.now();
  store.db.transaction(() => {
    const channels = new Map<string, string>();
    for (const r of batch) {
      const channel = r.chat_identifier ?? r.chat_guid ?? "";
      channels.set(channel, r.chat_guid ?? "");
      store.messages.insert({
        id: `msg_${String(n++).padStart(26, "0")}`,
        source: "device_messenger",
        platform_id: r.guid,
        channel_id: channel,
        channel_type: r.chat_style === 43 ? "group" : "dm",
        sender_id: r.handle ?? "",
        sender_name: r.handle ?? "",
        person_id: null,
        text: r.text ?? "",
        reply_to: null,
        message_ts: r.date_ms,
        direction: "inbound",
        allowlist_status: "unknown",
        raw: JSON.stringify(rawOf(r, [])),
        created_at: now,
      });
    }
    for (const [id, ref] of channels)
      store.channels.observeInbound({ id, source: "device_messenger", type: "dm", platformRef: ref }, now);
    store.cursors.set("device_messenger", String(batch.at(-1)?.rowid), now);
  })();
  rows += batch.length;
  cursor = batch.at(-1)?.rowid as number;
}
const ms = performance.now() - t0;
store.close();
chat.close();
process.stdout.write(`${JSON.stringify({ rows, ms })}\n`);
