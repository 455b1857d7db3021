/**
 * `gw doctor`: checks what `gw serve` needs and what runs, and says what to fix: one line per check,
 * `ok | warn | fail: what — why — how to fix`, under two headings, or `--json` (each check with its
 * `scope`): what this shell's configuration would run (`config`), and what the service already running
 * reports (`running`; it may have been started with another configuration, and a connector it runs that
 * this configuration would not is said in one line, not beside a contradicting "off"). Never writes: the
 * state database is inspected, not created; chat.db is opened read-only; the webhook target gets one
 * signed test delivery that `gw receiver` does not run; the running service gets one read-only request
 * with this shell's token. Exit 0 when nothing fails (warnings pass), 1 otherwise, 2 when the
 * configuration itself does not parse. The checks live in src/doctor/.
 */
import { join } from "node:path";
import { defaultDirs } from "../config/paths.ts";
import { hostPort } from "../core/http-edge.ts";
import { bunSpawner } from "../core/spawn.ts";
import { type Check, inScope, ok, passed, renderJson, renderText } from "../doctor/check.ts";
import { configuredConnectors } from "../doctor/connectors.ts";
import { contactsChecks } from "../doctor/contacts.ts";
import { allowlistChecks, stateChecks } from "../doctor/local.ts";
import { discordChecks, imessageChecks } from "../doctor/platforms.ts";
import { loginServiceCheck, runningServiceChecks, webhookChecks } from "../doctor/service.ts";
import { getServiceStatus } from "../service-manager/status.ts";
import { ENV_FILE_NAME } from "../service-manager/target.ts";
import { type CommandContext, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { configOf, hostOf } from "./setup.ts";

export async function doctor(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx);
  const here = [
    ok("config", "configuration parses and GW_BEARER_TOKEN is set"),
    ...stateChecks(config),
    ...allowlistChecks(config),
    ...(await imessageChecks(
      config,
      { platform: ctx.platform, path: ctx.env.PATH ?? "/usr/bin:/bin" },
      bunSpawner,
    )),
    ...contactsChecks(config),
    ...(await discordChecks(config, fetch)),
    ...(await webhookChecks(config, fetch, Math.floor(Date.now() / 1000))),
  ];
  const running = await runningServiceChecks(config, fetch, {
    configured: configuredConnectors(config),
    envFilePath: join(defaultDirs(ctx.env, hostOf(ctx)).configDir, ENV_FILE_NAME),
  });
  const login = loginServiceCheck(
    await getServiceStatus({
      manager: config.serviceManager,
      env: ctx.env,
      host: hostOf(ctx),
      uid: process.getuid?.() ?? 0,
      spawner: bunSpawner,
    }),
  );
  const checks: Check[] = [
    ...inScope(
      "config",
      here.filter((c) => !running.contradicted.includes(c.id)),
    ),
    ...inScope("running", [...running.checks, login]),
  ];
  const at = hostPort(config.bindHost, config.bindPort);
  ctx.stdout.write(
    ctx.argv.includes("--json")
      ? renderJson(checks)
      : renderText(checks, {
          config: "this shell's configuration (what `gw serve` would run if started from here):",
          running: `the running service on ${at} (what runs now, with the configuration it was started with):`,
        }),
  );
  return passed(checks) ? EXIT_OK : EXIT_FAILURE;
}
