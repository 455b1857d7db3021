/**
 * Child process of bench/device.ts: gw built as `gw serve` builds it, or the same process with nothing
 * started.
 *
 *   bun run bench/device-gw.ts on    # notifications on (the default of `gw serve`)
 *   bun run bench/device-gw.ts off   # file-change notifications off: the poll timer only
 *   bun run bench/device-gw.ts bare  # same script and imports, nothing created or started (idle baseline)
 *
 * on/off: loadConfig over the GW_ variables of its environment, the pino logger (gw.log + stderr, level
 * from GW_LOG_LEVEL), createService with buildConnectors (the real iMessage connector over
 * GW_CHAT_DB_PATH; `watchFiles` false for `off`), start(), then app.listen on 127.0.0.1, port 0.
 * With BENCH_EXPECT_ROWID set it first waits until the device_messenger cursor reaches that ROWID and
 * reports how long that took (the backlog measurement; start() itself reads synchronously).
 * BENCH_TRACE_INGEST=1 reports every ingest batch (see traced below; off for the backlog run).
 * Prints one line `{"ready":<port>, ...}` on stdout, then answers the commands of lib/child-protocol.ts.
 */
import { buildConnectors } from "../src/connectors/registry.ts";
import { systemClock } from "../src/core/ports.ts";
import { bunSpawner } from "../src/core/spawn.ts";
import { createService } from "../src/service.ts";
import { emit, now, processStats, serveCommands } from "./lib/child-protocol.ts";
import { serveSetup, traceIngest } from "./lib/gw-child.ts";

const mode = process.argv[2];
if (mode !== "on" && mode !== "off" && mode !== "bare") {
  process.stderr.write("usage: bun run bench/device-gw.ts <on|off|bare>\n");
  process.exit(2);
}

/**
 * With BENCH_TRACE_INGEST=1, every batch that moved the cursor is reported as
 * `{"ingested":<cursor>,"n":<messages>,"t":<now>}` the instant its transaction has committed.
 */
const traced = (build: ReturnType<typeof buildConnectors>) =>
  process.env.BENCH_TRACE_INGEST !== "1"
    ? build
    : traceIngest(build, (batch) => {
        if (batch.cursor !== null)
          emit({ ingested: Number(batch.cursor), n: batch.messages.length, t: now() });
      });

if (mode === "bare") {
  emit({ ready: 0, stats: processStats() });
  await serveCommands(() => {});
} else {
  const { env, host, config, log } = serveSetup(process.env);
  const tCreate = performance.now();
  const svc = createService({
    config,
    clock: systemClock,
    log,
    host,
    connectors: traced(
      buildConnectors({
        config,
        env,
        host,
        clock: systemClock,
        log,
        spawner: bunSpawner,
        watchFiles: mode === "on",
      }),
    ),
  });
  const tStart = performance.now();
  await svc.start();
  const tStarted = performance.now();
  const cursor = () => Number(svc.store.cursors.get("device_messenger")?.position ?? -1);
  const expect = Number(env.BENCH_EXPECT_ROWID ?? 0);
  while (cursor() < expect) await Bun.sleep(1);
  const tCaughtUp = performance.now();
  svc.app.listen({ hostname: "127.0.0.1", port: 0, reusePort: false });
  emit({
    ready: svc.app.server?.port ?? 0,
    cursor: cursor(),
    createMs: tStart - tCreate,
    startMs: tStarted - tStart,
    caughtUpMs: tCaughtUp - tStart,
    caughtUpFromCreateMs: tCaughtUp - tCreate,
    stats: processStats(),
  });
  await serveCommands(async () => {
    await svc.app.stop();
    await svc.close();
  });
}
