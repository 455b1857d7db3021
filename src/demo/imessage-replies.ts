/**
 * Shows what the Messages stand-in wrote: every new own row (`is_from_me = 1`) of the demo chat.db is
 * handed to `onReply` once, with the chat's identifier and the decoded text, in ROWID order. Reads
 * through the demo's own writer connection; only rows after the newest one at start count.
 */
import type { Database } from "bun:sqlite";
import { decodeAttributedBody } from "../connectors/device-messenger/typedstream.ts";

const CHECK_EVERY_MS = 250;

interface OwnRow {
  rowid: number;
  text: string | null;
  body: Uint8Array | null;
  chat: string | null;
}

export function watchOwnRows(db: Database, onReply: (reply: { to: string; text: string }) => void) {
  const newest = db.query<{ m: number | null }, []>("SELECT MAX(ROWID) AS m FROM message").get();
  let after = newest?.m ?? 0;
  const rows = db.query<OwnRow, [number]>(
    `SELECT m.ROWID AS rowid, m.text AS text, m.attributedBody AS body, c.chat_identifier AS chat
     FROM message m
     LEFT JOIN chat_message_join j ON j.message_id = m.ROWID
     LEFT JOIN chat c ON c.ROWID = j.chat_id
     WHERE m.is_from_me = 1 AND m.ROWID > ?1 ORDER BY m.ROWID`,
  );
  const check = () => {
    let found: OwnRow[];
    try {
      found = rows.all(after);
    } catch {
      return; // busy while the stand-in writes: the next check sees the row
    }
    for (const r of found) {
      after = Math.max(after, r.rowid);
      onReply({ to: r.chat ?? "(no chat)", text: r.text ?? decodeAttributedBody(r.body) ?? "" });
    }
  };
  const timer = setInterval(check, CHECK_EVERY_MS);
  return {
    stop: () => {
      clearInterval(timer);
      check();
    },
  };
}
