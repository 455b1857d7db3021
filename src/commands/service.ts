/**
 * `gw service install | uninstall | status [--json]`: runs `gw serve` as a login service, launchd on macOS
 * and a systemd user unit elsewhere (GW_SERVICE_MANAGER overrides); what it writes and where is in the README
 * ("The login service"). A ServiceError exits 2 (configuration: a bad env file line or value) or 1; status
 * exits 0 only when the service is installed, running and answers /healthz.
 */
import { bunSpawner } from "../core/spawn.ts";
import { envFileConfig } from "../service-manager/env-config.ts";
import { newBearerToken, readEnvFile } from "../service-manager/env-file-store.ts";
import { ServiceError } from "../service-manager/errors.ts";
import { healthUrl, probeHealth } from "../service-manager/health-probe.ts";
import {
  type InstallReport,
  installService,
  type UninstallReport,
  uninstallService,
} from "../service-manager/install.ts";
import { launchdLogPaths } from "../service-manager/launchd-plist.ts";
import { readServiceStatus } from "../service-manager/status.ts";
import { type StatusReport, statusJson, statusOk, statusText } from "../service-manager/status-report.ts";
import { type ServiceTarget, serviceTarget } from "../service-manager/target.ts";
import { commandLine, createToolRunner, type RunTool } from "../service-manager/tools.ts";
import { type CommandContext, CommandError, EXIT_CONFIG, EXIT_FAILURE, EXIT_OK } from "./exit.ts";
import { selfCommand } from "./self.ts";
import { configOf, hostOf } from "./setup.ts";

// The help texts live in a module without imports, so help.ts can show them without loading this command.
export { SERVICE_HELP, SERVICE_SUMMARY } from "../service-manager/help-text.ts";

const USAGE = "usage: gw service install | uninstall | status [--json]";

/**
 * Composition root: builds the real spawner (launchctl/systemctl found on PATH), uid, fetch and this
 * program's own command.
 */
export async function service(ctx: CommandContext): Promise<number> {
  const [sub, ...rest] = ctx.argv;
  const json = sub === "status" && rest.includes("--json");
  const extra = rest.filter((a) => !(json && a === "--json"));
  if ((sub !== "install" && sub !== "uninstall" && sub !== "status") || extra.length > 0)
    throw new CommandError(USAGE, EXIT_CONFIG);

  // Only GW_SERVICE_MANAGER matters here: the service's own settings live in the env file.
  const { serviceManager } = configOf(ctx, {
    env: { GW_SERVICE_MANAGER: ctx.env.GW_SERVICE_MANAGER },
    required: [],
  });
  const target = serviceTarget(serviceManager, ctx.env, hostOf(ctx), process.getuid?.() ?? 0);
  const run = createToolRunner(bunSpawner, ctx.env);
  try {
    if (sub === "install") {
      const report = await installService({
        target,
        host: hostOf(ctx),
        shellEnv: ctx.env,
        self: selfCommand(),
        run,
        newToken: newBearerToken,
      });
      for (const w of report.warnings) ctx.stderr.write(`warning: ${w}\n`);
      ctx.stdout.write(installText(report));
      return EXIT_OK;
    }
    if (sub === "uninstall") {
      ctx.stdout.write(uninstallText(await uninstallService({ target, run })));
      return EXIT_OK;
    }
    const report = await status(ctx, target, run);
    ctx.stdout.write(json ? `${JSON.stringify(statusJson(report), null, 2)}\n` : statusText(report));
    return statusOk(report) ? EXIT_OK : EXIT_FAILURE;
  } catch (err) {
    if (err instanceof ServiceError)
      throw new CommandError(err.message, err.configuration ? EXIT_CONFIG : EXIT_FAILURE);
    throw err;
  }
}

async function status(ctx: CommandContext, target: ServiceTarget, run: RunTool): Promise<StatusReport> {
  const envFile = readEnvFile(target.envFilePath);
  const { config } = envFileConfig(envFile?.vars ?? [], hostOf(ctx), target.envFilePath, []);
  const [service, health] = await Promise.all([
    readServiceStatus(target, run),
    probeHealth(healthUrl(config.bindHost, config.bindPort), fetch),
  ]);
  return {
    service,
    health,
    envFilePath: target.envFilePath,
    envFileExists: envFile !== null,
    logs: target.manager === "launchd" ? launchdLogPaths(config.logDir) : null,
  };
}

function tokenLine(envFilePath: string): string {
  return `export GW_BEARER_TOKEN=$(sed -n 's/^GW_BEARER_TOKEN=//p' ${commandLine([envFilePath])})`;
}

function installText(r: InstallReport): string {
  const t = r.target;
  const envState = r.envFileCreated ? "created, 0600, with a new GW_BEARER_TOKEN" : "kept as it is";
  const lines = [`gw service install (${t.manager})`, `  env file  ${t.envFilePath} (${envState})`];
  if (t.manager === "launchd") {
    lines.push(
      `  plist     ${t.definitionPath} (0600)`,
      `  logs      ${r.logs?.out}, ${r.logs?.err}`,
      `  loaded    launchctl bootstrap ${t.domain} ${t.definitionPath}${r.replaced ? " (the loaded copy was booted out first)" : ""}`,
      "Next:",
      "  1. Give the service Full Disk Access (it reads ~/Library/Messages/chat.db): System Settings →",
      "     Privacy & Security → Full Disk Access → +, press ⌘⇧G and paste this path:",
      `       ${r.program}`,
      "     then restart the service with `gw service install`. The first iMessage send asks to let it",
      "     control Messages (Automation): allow it.",
      "  2. Check it: `gw service status`, then `gw doctor`.",
      `  3. Clients (gw mcp, agents) send the token of the env file:`,
      `       ${tokenLine(t.envFilePath)}`,
      "Edited the env file or upgraded gw? Run `gw service install` again.",
    );
  } else {
    lines.push(
      `  unit      ${t.definitionPath}`,
      "Next, run (gw does not):",
      ...r.nextCommands.map((c) => `  ${c}`),
      "  (already running? `systemctl --user restart gw` starts the new unit; to keep it running after you",
      "  log out: `loginctl enable-linger $USER`)",
      "Then check it: `gw service status`, then `gw doctor`.",
      `Clients (gw mcp, agents) send the token of the env file:`,
      `  ${tokenLine(t.envFilePath)}`,
      "Edited the env file? `systemctl --user restart gw`. Upgraded gw to a new path? `gw service install` again.",
    );
  }
  return `${lines.join("\n")}\n`;
}

function uninstallText(r: UninstallReport): string {
  const t = r.target;
  const lines = [`gw service uninstall (${t.manager})`];
  if (t.manager === "launchd")
    lines.push(
      r.unloaded ? `  unloaded  launchctl bootout ${t.serviceRef}` : `  unloaded  (it was not loaded)`,
    );
  lines.push(r.removed ? `  removed   ${t.definitionPath}` : `  removed   (no ${t.definitionPath})`);
  if (r.enableLinkRemoved)
    lines.push(`  removed   ${t.enableLink} (what \`systemctl --user disable gw\` removes)`);
  lines.push(
    r.envFileKept
      ? `  kept      ${t.envFilePath} (your token and settings; delete it yourself if you no longer want them)`
      : `  kept      nothing: there is no ${t.envFilePath}`,
  );
  if (r.nextCommands.length > 0) lines.push("Now run (gw does not):", ...r.nextCommands.map((c) => `  ${c}`));
  return `${lines.join("\n")}\n`;
}
