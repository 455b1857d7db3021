/**
 * Child process of bench/api/api.ts: a baseline serving an already seeded database on 127.0.0.1 (gw's
 * own side is lib/gw-server.ts).
 *
 *   bun run bench/api/server.ts raw  <work dir> <port>
 *   bun run bench/api/server.ts bare <work dir> <port>
 *
 * raw:  a bare Bun.serve on the same database (openStore) that answers GET /messages/unread with the
 *       route's own work done directly: store.reads.unread, the page's attachments in one query,
 *       envelopeJson per row (the route's own JSON writer), next_since. No auth, no framework, no schema.
 * bare: a bare Bun.serve on a plain copy of the database with the simplest correct SQL and none of
 *       gw's code (bare.ts).
 *
 * The database is <work dir>/data/gw.db (written by api.ts). BENCH_BASE_URL is the attachment URL base
 * (the gateway derives it from its bind address). Prints `ready <port>` once it accepts connections;
 * stops cleanly (closing the store) on SIGTERM or SIGINT.
 */
import { join } from "node:path";
import { formatTimestamp } from "../../src/core/time.ts";
import { envelopeJson } from "../../src/store/envelope.ts";
import { openStore } from "../../src/store/store.ts";
import { readyUntilSignal, serveGet, serverArgs } from "../lib/child-protocol.ts";
import { serveBare } from "./bare.ts";

const { mode, dir, port } = serverArgs("bench/api/server.ts", ["raw", "bare"]);
const dbPath = join(dir, "data/gw.db");
const baseUrl = process.env.BENCH_BASE_URL || `http://127.0.0.1:${port}`;

let stop: () => Promise<void>;

if (mode === "bare") {
  stop = serveBare(dbPath, join(dir, "data/bare.db"), port, baseUrl);
} else {
  const store = openStore(dbPath);
  const server = serveGet(port, "/messages/unread", (url, req) => {
    const limit = Math.min(Number(url.searchParams.get("limit") ?? 20) || 20, 100);
    const rows = store.reads.unread(req.headers.get("x-agent-id") ?? "", {
      source: null,
      channelId: null,
      sinceMs: null,
      limit,
    });
    const atts = store.attachments.forMessages(rows.map((r) => r.id));
    const messages = rows.map((r) => envelopeJson(r, atts.get(r.id) ?? [], baseUrl)).join(",");
    const nextSince = rows.length > 0 ? formatTimestamp(Math.max(...rows.map((r) => r.message_ts))) : "";
    return new Response(`{"messages":[${messages}],"next_since":${JSON.stringify(nextSince)}}`, {
      headers: { "content-type": "application/json" },
    });
  });
  stop = async () => {
    await server.stop(true);
    store.close();
  };
}

readyUntilSignal(port, () => stop());
