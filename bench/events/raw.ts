/**
 * Child process of bench/events/events.ts: the raw baseline for GET /events, a bare Bun.serve and a bare
 * bun:sqlite connection on the seeded database running the route's query (the SQL of
 * src/store/events.ts) and writing the same JSON (the fields of toEvent, the timestamp by
 * formatTimestamp). No auth, no framework, no schema; `since` and `limit` read as given.
 *
 *   bun run bench/events/raw.ts raw <work dir> <port>
 *
 * Reads <work dir>/data/gw.db (the layout of lib/gw-server.ts, which serves the gateway side). Prints
 * `ready <port>` once it accepts connections; closes the database on SIGTERM or SIGINT.
 */
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { formatTimestamp } from "../../src/core/time.ts";
import type { EventRow } from "../../src/store/events.ts";
import { readyUntilSignal, serveGet, serverArgs } from "../lib/child-protocol.ts";

const { dir, port } = serverArgs("bench/events/raw.ts", ["raw"]);
const db = new Database(join(dir, "data/gw.db"));
db.run("PRAGMA busy_timeout = 5000");

/** What the route reads of a row (SELECT * as src/store/events.ts). */
type Row = Pick<
  EventRow,
  | "id"
  | "kind"
  | "source"
  | "channel_id"
  | "message_id"
  | "sender_id"
  | "sender_name"
  | "person_id"
  | "event_ts"
  | "data"
>;

const after = db.prepare<Row, [string, number]>(
  "SELECT * FROM events INDEXED BY events_visible WHERE visible = 1 AND id > ?1 ORDER BY id LIMIT ?2",
);

const server = serveGet(port, "/events", (url) => {
  const since = url.searchParams.get("since") ?? "";
  const limit = Number(url.searchParams.get("limit") ?? 20) || 20;
  const rows = after.all(since, limit);
  const events = rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    source: r.source,
    channel_id: r.channel_id,
    message_id: r.message_id,
    sender: { id: r.sender_id, display_name: r.sender_name, person_id: r.person_id },
    timestamp: formatTimestamp(r.event_ts),
    data: JSON.parse(r.data),
  }));
  return new Response(JSON.stringify({ events, next_since: rows.at(-1)?.id ?? since }), {
    headers: { "content-type": "application/json" },
  });
});

readyUntilSignal(port, async () => {
  await server.stop(true);
  db.close();
});
