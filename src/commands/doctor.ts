/**
 * `gw doctor`: checks what `gw serve` needs and what runs, and says what to fix: one line per check,
 * `ok | warn | fail: what — why — how to fix`, or `--json`. Never writes: the state database is
 * inspected, not created; chat.db is opened read-only; the webhook target gets one signed test delivery
 * that `gw receiver` does not run. Exit 0 when nothing fails (warnings pass), 1 otherwise, 2 when the
 * configuration itself does not parse. The checks live in src/doctor/.
 */
import { bunSpawner } from "../core/spawn.ts";
import { type Check, ok, passed, renderJson, renderLine } from "../doctor/check.ts";
import { allowlistChecks, stateChecks } from "../doctor/local.ts";
import { discordChecks, imessageChecks } from "../doctor/platforms.ts";
import { loginServiceCheck, runningServiceChecks, webhookChecks } from "../doctor/service.ts";
import { getServiceStatus } from "../service-manager/status.ts";
import { type CommandContext, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { configOf, hostOf } from "./setup.ts";

export async function doctor(ctx: CommandContext): Promise<number> {
  const config = configOf(ctx);
  const checks: Check[] = [
    ok("config", "configuration parses and GW_BEARER_TOKEN is set"),
    ...stateChecks(config),
    ...allowlistChecks(config),
    ...(await imessageChecks(
      config,
      { platform: ctx.platform, path: ctx.env.PATH ?? "/usr/bin:/bin" },
      bunSpawner,
    )),
    ...(await discordChecks(config, fetch)),
    ...(await webhookChecks(config, fetch, Math.floor(Date.now() / 1000))),
    loginServiceCheck(
      await getServiceStatus({
        manager: config.serviceManager,
        env: ctx.env,
        host: hostOf(ctx),
        uid: process.getuid?.() ?? 0,
        spawner: bunSpawner,
      }),
    ),
    ...(await runningServiceChecks(config, fetch)),
  ];
  ctx.stdout.write(
    ctx.argv.includes("--json") ? renderJson(checks) : `${checks.map(renderLine).join("\n")}\n`,
  );
  return passed(checks) ? EXIT_OK : EXIT_FAILURE;
}
