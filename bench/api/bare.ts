/**
 * bench/api/server.ts's `bare` server ([speed] item 2): what a program written with nothing but
 * `Bun.serve` and `bun:sqlite` would do for `GET /messages/unread` — the spec's contract with the
 * simplest correct SQL, none of gw's code. Its database is a plain copy of the seeded one (built once,
 * untimed, on the first start): messages with a (status, message_ts, id) index, read marks
 * (message_id, agent_id) WITHOUT ROWID, attachments by message. One query for the page (NOT EXISTS over
 * the agent's marks), one batched attachment lookup, the envelope JSON written by hand with the stored
 * `raw` spliced in; the same bytes as gw's answer (servers.ts checks it before any load). No
 * auth, no framework, no schema.
 */
import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { serveGet } from "../lib/child-protocol.ts";

const SCHEMA = `
  CREATE TABLE messages (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, channel_id TEXT NOT NULL, channel_type TEXT NOT NULL,
    sender_id TEXT NOT NULL, sender_name TEXT NOT NULL, person_id TEXT, text TEXT NOT NULL,
    reply_to TEXT, message_ts INTEGER NOT NULL, direction TEXT NOT NULL, status TEXT NOT NULL,
    raw TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX messages_status_ts ON messages (status, message_ts, id);
  CREATE TABLE read_marks (
    message_id TEXT NOT NULL, agent_id TEXT NOT NULL, PRIMARY KEY (message_id, agent_id)
  ) WITHOUT ROWID;
  CREATE TABLE attachments (
    id TEXT PRIMARY KEY, message_id TEXT NOT NULL, mime TEXT NOT NULL, size_bytes INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX attachments_message ON attachments (message_id, id);`;

/** Copies the seeded gw database's rows into the plain schema at `barePath` (once). */
function buildBare(gwPath: string, barePath: string): void {
  if (existsSync(barePath)) return;
  const db = new Database(barePath, { create: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run(`ATTACH DATABASE '${gwPath.replaceAll("'", "''")}' AS gw`);
  db.transaction(() => {
    db.run(SCHEMA);
    db.run(`INSERT INTO messages SELECT id, source, channel_id, channel_type, sender_id, sender_name,
      person_id, text, reply_to, message_ts, direction, allowlist_status, raw FROM gw.messages`);
    db.run("INSERT INTO read_marks SELECT message_id, agent_id FROM gw.read_marks");
    db.run("INSERT INTO attachments SELECT id, message_id, mime, size_bytes FROM gw.attachments");
  })();
  db.run("DETACH DATABASE gw");
  db.run("ANALYZE");
  db.close();
}

// Mirrors src/store/messages.ts's row on purpose: the bare baseline shares no gw code.
type Row = {
  id: string;
  source: string;
  channel_id: string;
  channel_type: string;
  sender_id: string;
  sender_name: string;
  person_id: string | null;
  text: string;
  reply_to: string | null;
  message_ts: number;
  direction: string;
  raw: string;
};
type Attachment = { id: string; message_id: string; mime: string; size_bytes: number };

export function serveBare(gwPath: string, barePath: string, port: number, baseUrl: string) {
  buildBare(gwPath, barePath);
  const db = new Database(barePath);
  db.run("PRAGMA journal_mode = WAL");
  const page = db.prepare<Row, [string, number]>(`
    SELECT * FROM messages m
    WHERE m.status = 'allowed'
      AND NOT EXISTS (SELECT 1 FROM read_marks r WHERE r.message_id = m.id AND r.agent_id = ?1)
    ORDER BY m.message_ts, m.id LIMIT ?2`);
  const attachments = db.prepare<Attachment, [string]>(
    "SELECT * FROM attachments WHERE message_id IN (SELECT value FROM json_each(?1)) ORDER BY message_id, id",
  );
  // Mirrors gw's envelopeJson (the same bytes) on purpose, written by hand: no gw code here.
  const envelope = (r: Row, atts: Attachment[]) => {
    const head = JSON.stringify({
      id: r.id,
      source: r.source,
      channel_id: r.channel_id,
      channel_type: r.channel_type,
      sender: { id: r.sender_id, display_name: r.sender_name, person_id: r.person_id },
      text: r.text,
      attachments: atts.map((a) => ({
        id: a.id,
        url: `${baseUrl}/attachments/${a.id}`,
        mime: a.mime,
        size_bytes: a.size_bytes,
      })),
      reply_to: r.reply_to,
      timestamp: new Date(r.message_ts).toISOString(),
      direction: r.direction,
    });
    return `${head.slice(0, -1)},"raw":${r.raw}}`;
  };
  const server = serveGet(port, "/messages/unread", (url, req) => {
    const limit = Math.min(Number(url.searchParams.get("limit") ?? 20) || 20, 100);
    const rows = page.all(req.headers.get("x-agent-id") ?? "", limit);
    const byMessage = new Map<string, Attachment[]>();
    if (rows.length > 0)
      for (const a of attachments.all(JSON.stringify(rows.map((r) => r.id))))
        byMessage.set(a.message_id, [...(byMessage.get(a.message_id) ?? []), a]);
    const messages = rows.map((r) => envelope(r, byMessage.get(r.id) ?? [])).join(",");
    const last = rows.at(-1);
    const nextSince = last ? new Date(last.message_ts).toISOString() : "";
    return new Response(`{"messages":[${messages}],"next_since":${JSON.stringify(nextSince)}}`, {
      headers: { "content-type": "application/json" },
    });
  });
  return async () => {
    await server.stop(true);
    db.close();
  };
}
