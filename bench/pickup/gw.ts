/**
 * Child process of bench/pickup/pickup.ts: gw built as `gw serve` builds it, in its order: loadConfig over the
 * GW_ variables of its environment, the pino logger (the day's log file + stderr at GW_LOG_LEVEL), buildConnectors
 * with the real iMessage connector on GW_CHAT_DB_PATH, createService, prepare(), app.listen on
 * 127.0.0.1 port 0, then start(). Webhooks go to GW_WEBHOOK_URL when it is set.
 *
 *   bun run bench/pickup/gw.ts on    # file-change notifications on (what `gw serve` does)
 *   bun run bench/pickup/gw.ts off   # notifications off: the GW_DEVICE_POLL_INTERVAL_MS timer only
 *
 * The ingest function the connector is started with is wrapped (lib/gw-child.ts serveLikeGw's trace, no src
 * change) to stamp, in memory, the instant each batch's transaction returned: from then on
 * GET /messages/unread lists its messages and the webhook dispatcher has been woken. Prints
 * `{"ready":<port>}` once listening and started, then answers lib/child-protocol.ts plus
 * `stamps` → {ingested: [[text, t], ...]} and `deliveries` → {rows: [[delivery id, text], ...]}.
 */
import { emit, now, serveCommands } from "../lib/child-protocol.ts";
import { serveLikeGw, serveSetup } from "../lib/gw-child.ts";

const mode = process.argv[2];
if (mode !== "on" && mode !== "off") {
  process.stderr.write("usage: bun run bench/pickup/gw.ts <on|off>\n");
  process.exit(2);
}

const ingested: [string, number][] = [];
const { svc } = await serveLikeGw(
  await serveSetup(process.env),
  { hostname: "127.0.0.1", port: 0 },
  {
    watchFiles: mode === "on",
    trace: {
      after: (batch) => {
        if (batch.messages.length === 0) return;
        const t = now();
        for (const m of batch.messages) ingested.push([m.text, t]);
      },
    },
  },
);
emit({ ready: svc.app.server?.port ?? 0, pid: process.pid });

await serveCommands(
  async () => {
    await svc.app.stop();
    await svc.close();
  },
  (c) => {
    if (c.cmd === "stamps") return { ingested };
    if (c.cmd === "deliveries")
      return {
        rows: svc.store.db
          .query<{ delivery: string; text: string }, []>(
            "SELECT d.id AS delivery, m.text AS text FROM webhook_deliveries d JOIN messages m ON m.id = d.message_id",
          )
          .all()
          .map((r) => [r.delivery, r.text]),
      };
    return { error: `unknown command ${c.cmd}` };
  },
);
