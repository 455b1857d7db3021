/**
 * Child process of bench/load/load.ts: gw built as `gw serve` builds it, in its order: loadConfig over the
 * GW_ variables of its environment, the pino logger (the day's log file + stderr at GW_LOG_LEVEL),
 * buildConnectors with both real connectors (iMessage on GW_CHAT_DB_PATH with file-change
 * notifications, sends through GW_OSASCRIPT_PATH; Discord on GW_COMMUNITY_API_URL), createService,
 * prepare(), app.listen on 127.0.0.1 port 0, then start(). Webhooks go to GW_WEBHOOK_URL.
 *
 *   bun run bench/load/gw.ts
 *
 * Prints `{"ready":<port>,"pid":…}` once listening, started and both connectors report `ok`. Nothing
 * here runs during the load (the parent reads RSS and the WAL size from outside). Commands besides
 * those of lib/child-protocol.ts, answered from gw's own connection once the load is over:
 * - `health` → {connectors: {device_messenger, community_chat}}
 * - `progress` → {inbound: stored inbound messages whose text starts with BENCH_INBOUND_PREFIX,
 *   pending: webhook deliveries still pending, delivered, dead}
 * - `audit` → {inbound: [[text, allowlist_status, n]], deliveries: [[delivery id, text, status,
 *   attempts]], outbound: [[id, text, channel id, platform id]], counts}
 */
import { emit, serveCommands } from "../lib/child-protocol.ts";
import { bothConnectorsOk, serveLikeGw, serveSetup } from "../lib/gw-child.ts";

const setup = await serveSetup(process.env);
const { env } = setup;
const IN = `${env.BENCH_INBOUND_PREFIX ?? "in-"}%`;
const OUT = `${env.BENCH_SEND_PREFIX ?? "out-"}%`;

const { svc, states } = await serveLikeGw(setup, { hostname: "127.0.0.1", port: 0 });
await bothConnectorsOk(states);
const port = svc.app.server?.port ?? 0;
emit({ ready: port, pid: process.pid });

const db = svc.store.db;
const q = {
  inbound: db.query<{ n: number }, [string]>(
    "SELECT COUNT(*) AS n FROM messages WHERE direction = 'inbound' AND text LIKE ?1",
  ),
  deliveries: db.query<{ status: string; n: number }, []>(
    "SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status",
  ),
  inboundRows: db.query<{ text: string; status: string; n: number }, [string]>(
    `SELECT text, allowlist_status AS status, COUNT(*) AS n FROM messages
     WHERE direction = 'inbound' AND text LIKE ?1 GROUP BY text, allowlist_status`,
  ),
  deliveryRows: db.query<{ id: string; text: string; status: string; attempts: number }, []>(
    `SELECT d.id AS id, m.text AS text, d.status AS status, d.attempt_count AS attempts
     FROM webhook_deliveries d JOIN messages m ON m.id = d.message_id`,
  ),
  outboundRows: db.query<{ id: string; text: string; channel: string; platform: string | null }, [string]>(
    `SELECT id, text, channel_id AS channel, platform_id AS platform FROM messages
     WHERE direction = 'outbound' AND text LIKE ?1`,
  ),
  counts: db.query<{ messages: number; allowed: number; marks: number; runs: number }, []>(
    `SELECT (SELECT COUNT(*) FROM messages) AS messages,
            (SELECT COUNT(*) FROM messages WHERE allowlist_status = 'allowed') AS allowed,
            (SELECT COUNT(*) FROM read_marks) AS marks,
            (SELECT COUNT(*) FROM read_runs) AS runs`,
  ),
};

const deliveryCounts = () => {
  const c: Record<string, number> = { pending: 0, delivered: 0, dead: 0 };
  for (const r of q.deliveries.all()) c[r.status] = r.n;
  return c;
};

await serveCommands(
  async () => {
    svc.endLongPolls();
    await svc.app.stop();
    await svc.close();
  },
  async (c) => {
    if (c.cmd === "health") return { connectors: states() };
    if (c.cmd === "progress") return { inbound: q.inbound.get(IN)?.n ?? 0, ...deliveryCounts() };
    if (c.cmd === "audit")
      return {
        inbound: q.inboundRows.all(IN).map((r) => [r.text, r.status, r.n]),
        deliveries: q.deliveryRows.all().map((r) => [r.id, r.text, r.status, r.attempts]),
        outbound: q.outboundRows.all(OUT).map((r) => [r.id, r.text, r.channel, r.platform]),
        counts: q.counts.get(),
      };
    return { error: `unknown command ${c.cmd}` };
  },
);
