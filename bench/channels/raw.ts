/**
 * Child process of bench/channels/channels.ts: the raw baseline for GET /channels, a bare Bun.serve on the seeded
 * database (openStore, as gw opens it) doing the route's own work directly: store.channelList.page, each
 * row's name by the route's channelName (the allowlist parsed once from the file) and timestamp by
 * formatTimestamp, JSON.stringify. No auth, no framework, no schema, no validation beyond a number.
 *
 *   bun run bench/channels/raw.ts raw <work dir> <port>
 *
 * Reads <work dir>/data/gw.db and <work dir>/allowlist.toml (the layout of lib/gw-server.ts, which
 * serves the gateway side). Prints `ready <port>` once it accepts connections; closes the store on
 * SIGTERM or SIGINT.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllowlist } from "../../src/allowlist/parse.ts";
import type { Source } from "../../src/core/envelope.ts";
import { formatTimestamp } from "../../src/core/time.ts";
import { channelName } from "../../src/http/routes/channels.ts";
import { openStore } from "../../src/store/store.ts";
import { readyUntilSignal, serveGet, serverArgs } from "../lib/child-protocol.ts";

const { dir, port } = serverArgs("bench/channels/raw.ts", ["raw"]);
const parsed = parseAllowlist(readFileSync(join(dir, "allowlist.toml"), "utf8"));
if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
const allowlist = parsed.allowlist;
const store = openStore(join(dir, "data/gw.db"));

const server = serveGet(port, "/channels", (url, req) => {
  const rows = store.channelList.page({
    agentId: req.headers.get("x-agent-id") ?? "",
    source: (url.searchParams.get("source") ?? null) as Source | null,
    personId: url.searchParams.get("person_id"),
    limit: Number(url.searchParams.get("limit") ?? 100) || 100,
  });
  const channels = rows.map((r) => ({
    channel_id: r.channel_id,
    source: r.source,
    channel_type: r.channel_type,
    name: channelName(r, allowlist),
    last_message_at: formatTimestamp(r.last_visible_at),
    unread_count: Math.max(0, r.unread_count),
  }));
  return new Response(JSON.stringify({ channels }), { headers: { "content-type": "application/json" } });
});

readyUntilSignal(port, async () => {
  await server.stop(true);
  store.close();
});
