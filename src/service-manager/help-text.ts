/**
 * `gw service`'s help texts (no imports, so src/commands/help.ts can show them without loading the
 * command): SERVICE_SUMMARY is the one line of `gw --help`, SERVICE_HELP the body of `gw service --help`.
 */
export const SERVICE_SUMMARY =
  "Run gw serve as a login service (launchd or systemd): install | uninstall | status.";

export const SERVICE_HELP = [
  "gw service install     write the env file (once: a new GW_BEARER_TOKEN, 0600, never overwritten) and",
  "                       the launchd plist (macOS: ~/Library/LaunchAgents/dev.gw.serve.plist, then",
  "                       launchctl bootstrap) or the systemd user unit (~/.config/systemd/user/gw.service,",
  "                       then prints the systemctl lines to run). Run it again after an upgrade or an edit.",
  "gw service uninstall   unload and remove the plist, or remove the unit; the env file is kept.",
  "gw service status      installed, loaded, running, pid, last exit, and whether /healthz answers on",
  "  [--json]             GW_BIND_HOST:GW_BIND_PORT from the env file; exit 0 only when all is well.",
  "The env file is <config dir>/env (~/.config/gw/env): KEY=value lines, no quotes, # comments; the",
  "service reads its settings only from there. GW_SERVICE_MANAGER=launchd|systemd overrides the platform.",
].join("\n");
