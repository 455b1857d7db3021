/**
 * Child process of lib/http-server.ts: gw's API on an already seeded work dir, built as `gw serve` builds
 * it (loadConfig over an explicit environment, the pino logger, createService without connectors,
 * start(), app.listen()), on 127.0.0.1.
 *
 *   bun run bench/lib/gw-server.ts gateway <work dir> <port>
 *
 * The database is <work dir>/data/gw.db and the allowlist <work dir>/allowlist.toml; the bearer is
 * BENCH_TOKEN. Prints `ready <port>` once it accepts connections; stops cleanly (closing the store) on
 * SIGTERM or SIGINT.
 */
import { join } from "node:path";
import { systemClock } from "../../src/core/ports.ts";
import { createService } from "../../src/service.ts";
import { readyUntilSignal, serverArgs } from "./child-protocol.ts";
import { serveSetup } from "./gw-child.ts";

const { dir, port } = serverArgs("bench/lib/gw-server.ts", ["gateway"]);
const env: Record<string, string> = {
  HOME: dir,
  GW_BEARER_TOKEN: process.env.BENCH_TOKEN ?? "",
  GW_BIND_HOST: "127.0.0.1",
  GW_BIND_PORT: String(port),
  GW_DB_PATH: join(dir, "data/gw.db"),
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

readyUntilSignal(port, async () => {
  await svc.app.stop();
  await svc.close();
});
