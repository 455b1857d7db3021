/**
 * Child process of bench/api/api.ts: serves an already seeded database on 127.0.0.1 in one of two modes.
 *
 *   bun run bench/api/server.ts gateway <work dir> <port>
 *   bun run bench/api/server.ts raw     <work dir> <port>
 *   bun run bench/api/server.ts bare    <work dir> <port>
 *
 * gateway: the real service, built as `gw serve` builds it: loadConfig over an explicit environment,
 *          the pino logger, createService (no connectors), start(), app.listen().
 * raw:     the baseline: a bare Bun.serve on the same database (openStore) that answers
 *          GET /messages/unread with the route's own work done directly: store.reads.unread, the page's
 *          attachments in one query, envelopeJson per row (the route's own JSON writer), next_since.
 *          No auth, no framework, no schema.
 * bare:    a bare Bun.serve on a plain copy of the database with the simplest correct SQL and none of
 *          gw's code (bare.ts).
 *
 * The database is <work dir>/data/gw.db and the allowlist <work dir>/allowlist.toml (both written by
 * api.ts). Environment: BENCH_TOKEN (the bearer, gateway), BENCH_BASE_URL (attachment URL base, raw; the
 * gateway derives it from its bind address). Prints one line `ready <port>` on stdout once it accepts
 * connections; stops cleanly (closing the store) on SIGTERM or SIGINT.
 */
import { join } from "node:path";
import { systemClock } from "../../src/core/ports.ts";
import { formatTimestamp } from "../../src/core/time.ts";
import { createService } from "../../src/service.ts";
import { envelopeJson } from "../../src/store/envelope.ts";
import { openStore } from "../../src/store/store.ts";
import { readyUntilSignal, serveGet } from "../lib/child-protocol.ts";
import { serveSetup } from "../lib/gw-child.ts";
import { serveBare } from "./bare.ts";

const [mode, dir, portArg] = process.argv.slice(2);
if ((mode !== "gateway" && mode !== "raw" && mode !== "bare") || !dir || !portArg) {
  process.stderr.write("usage: bun run bench/api/server.ts <gateway|raw|bare> <work dir> <port>\n");
  process.exit(2);
}
const port = Number(portArg);
const dbPath = join(dir, "data/gw.db");

let stop: () => Promise<void>;

if (mode === "gateway") {
  const env: Record<string, string> = {
    HOME: dir,
    GW_BEARER_TOKEN: process.env.BENCH_TOKEN ?? "",
    GW_BIND_HOST: "127.0.0.1",
    GW_BIND_PORT: String(port),
    GW_DB_PATH: dbPath,
    GW_ATTACHMENT_DIR: join(dir, "data/attachments"),
    GW_LOG_DIR: join(dir, "logs"),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
    GW_CHAT_DB_PATH: join(dir, "chat.db"),
  };
  // As `gw serve`: JSON lines to the day's file in <log dir> and stderr, at the default level (info).
  const { host, config, log } = await serveSetup(env, dir);
  const svc = createService({ config, clock: systemClock, log, host, connectors: () => ({}) });
  await svc.start();
  svc.app.listen({ hostname: config.bindHost, port: config.bindPort, reusePort: false });
  stop = async () => {
    await svc.app.stop();
    await svc.close();
  };
} else if (mode === "bare") {
  const baseUrl = process.env.BENCH_BASE_URL ?? `http://127.0.0.1:${port}`;
  stop = serveBare(dbPath, join(dir, "data/bare.db"), port, baseUrl);
} else {
  const store = openStore(dbPath);
  const baseUrl = process.env.BENCH_BASE_URL ?? `http://127.0.0.1:${port}`;
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
