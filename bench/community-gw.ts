/**
 * Child process of bench/community.ts: gw built as `gw serve` builds it (loadConfig over the GW_
 * variables of its environment, the pino logger, createService with buildConnectors and the real
 * Discord connector, start(), app.listen on 127.0.0.1 port 0), with the connector's production settings.
 *
 *   bun run bench/community-gw.ts
 *
 * It waits until the Discord connector reports `ok` (or, with BENCH_EXPECT_COUNT set, until that many
 * community messages are stored, timed from start()), then prints `{"ready":<port>, ...}` and answers
 * the commands of device-child.ts plus `count` (community messages stored) and `deliveries`
 * ([[delivery id, text]]). With BENCH_TRACE_INGEST=1 every ingest batch that stored messages is
 * reported as `{"ingested":[texts],"t":<now>}` the instant its transaction returned (the connector's
 * ingest function is wrapped at the registry; nothing in src changes).
 */
import { buildConnectors } from "../src/connectors/registry.ts";
import { systemClock } from "../src/core/ports.ts";
import { bunSpawner } from "../src/core/spawn.ts";
import { createService } from "../src/service.ts";
import { emit, now, processStats, serveCommands } from "./device-child.ts";
import { serveSetup, traceIngest } from "./lib/gw-child.ts";

const { env, host, config, log } = serveSetup(process.env);

const build = buildConnectors({ config, env, host, clock: systemClock, log, spawner: bunSpawner });
const traced =
  env.BENCH_TRACE_INGEST !== "1"
    ? build
    : traceIngest(build, (batch) => {
        if (batch.messages.length > 0) emit({ ingested: batch.messages.map((m) => m.text), t: now() });
      });

const tCreate = performance.now();
const svc = createService({ config, clock: systemClock, log, host, connectors: traced });
const count = () =>
  (
    svc.store.db.query("SELECT COUNT(*) AS n FROM messages WHERE source = 'community_chat'").get() as {
      n: number;
    }
  ).n;
const tStart = performance.now();
await svc.start();
const tStarted = performance.now();
const expected = Number(env.BENCH_EXPECT_COUNT ?? 0);
const state = () =>
  (svc.app.handle(new Request("http://localhost/healthz")) as Promise<Response>).then(
    async (r) =>
      ((await r.json()) as { connectors: { community_chat: { state: string } } }).connectors.community_chat
        .state,
  );
while ((await state()) !== "ok") await Bun.sleep(1);
const tConnected = performance.now();
while (count() < expected) await Bun.sleep(1);
const tCaughtUp = performance.now();
svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
emit({
  ready: svc.app.server?.port ?? 0,
  count: count(),
  createMs: tStart - tCreate,
  startMs: tStarted - tStart,
  connectedMs: tConnected - tStart,
  caughtUpMs: tCaughtUp - tStart,
  stats: processStats(),
});

await serveCommands(
  async () => {
    await svc.app.stop();
    await svc.close();
  },
  (c) => {
    if (c.cmd === "count") return { n: count() };
    if (c.cmd === "deliveries")
      return {
        rows: svc.store.db
          .query(
            "SELECT d.id AS delivery, m.text AS text FROM webhook_deliveries d JOIN messages m ON m.id = d.message_id",
          )
          .all(),
      };
    return { error: `unknown command ${c.cmd}` };
  },
);
