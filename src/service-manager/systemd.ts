/**
 * systemd user-unit state (pure parser + one runner call): `systemctl --user show gw -p
 * LoadState,ActiveState,MainPID,ExecMainStatus` read as KEY=value lines in any order. gw never runs
 * systemctl to change anything: install and uninstall print the lines below for the user to run.
 */
import type { ServiceTarget } from "./target.ts";
import { type RunTool, toolFailure } from "./tools.ts";

export const SYSTEMD_SHOW_PROPERTIES = "LoadState,ActiveState,MainPID,ExecMainStatus";

export interface SystemdInfo {
  /** loaded, not-found, masked, … */
  loadState: string | null;
  /** active, inactive, failed, activating, … */
  activeState: string | null;
  /** null when 0 (no main process). */
  mainPid: number | null;
  execMainStatus: number | null;
}

export function parseSystemctlShow(text: string): SystemdInfo {
  const props = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) props.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const int = (key: string) => {
    const v = props.get(key);
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
  };
  const pid = int("MainPID");
  return {
    loadState: props.get("LoadState") || null,
    activeState: props.get("ActiveState") || null,
    mainPid: pid === 0 ? null : pid,
    execMainStatus: int("ExecMainStatus"),
  };
}

export async function systemdState(target: ServiceTarget, run: RunTool): Promise<SystemdInfo> {
  const argv = ["systemctl", "--user", "show", target.serviceRef, "-p", SYSTEMD_SHOW_PROPERTIES];
  const r = await run(argv);
  if (r.exitCode !== 0)
    throw toolFailure(argv, r, "Is a systemd user manager running for you (`systemctl --user status`)?");
  return parseSystemctlShow(r.stdout);
}

/** What the user runs after `gw service install` (gw does not run them). */
export const SYSTEMD_INSTALL_LINES = ["systemctl --user daemon-reload", "systemctl --user enable --now gw"];
/** What the user runs after `gw service uninstall` removed the unit and its enable link. */
export const SYSTEMD_UNINSTALL_LINES = ["systemctl --user stop gw", "systemctl --user daemon-reload"];
