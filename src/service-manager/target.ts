/**
 * Where the login service lives (pure): the manager (launchd on macOS, systemd elsewhere, or
 * GW_SERVICE_MANAGER), its name, the definition file, the env file in the config dir of `defaultDirs`,
 * and the launchd domain of the user. Every path is absolute; nothing here touches the disk.
 */
import { dirname, join } from "node:path";
import { defaultDirs, type HostInfo } from "../config/paths.ts";

export type ServiceManagerKind = "launchd" | "systemd";

export const LAUNCHD_LABEL = "dev.gw.serve";
export const SYSTEMD_UNIT = "gw.service";
/** How the unit is named on systemctl command lines. */
export const SYSTEMD_NAME = "gw";
export const ENV_FILE_NAME = "env";

export interface ServiceTarget {
  manager: ServiceManagerKind;
  /** The launchd label or the systemd unit file name. */
  name: string;
  /** The plist or the unit file. */
  definitionPath: string;
  /** KEY=value lines with GW_BEARER_TOKEN: the service's environment. */
  envFilePath: string;
  configDir: string;
  homeDir: string;
  /** launchd: `gui/<uid>`; systemd: `user`. */
  domain: string;
  /** launchd: `gui/<uid>/dev.gw.serve`; systemd: `gw`. */
  serviceRef: string;
  /** systemd: the link `systemctl --user enable` makes for WantedBy=default.target; launchd: null. */
  enableLink: string | null;
}

export function serviceTarget(
  manager: ServiceManagerKind,
  env: Record<string, string | undefined>,
  host: HostInfo,
  uid: number,
): ServiceTarget {
  const { configDir } = defaultDirs(env, host);
  const envFilePath = join(configDir, ENV_FILE_NAME);
  if (manager === "launchd") {
    const domain = `gui/${uid}`;
    return {
      manager,
      name: LAUNCHD_LABEL,
      definitionPath: join(host.homeDir, "Library/LaunchAgents", `${LAUNCHD_LABEL}.plist`),
      envFilePath,
      configDir,
      homeDir: host.homeDir,
      domain,
      serviceRef: `${domain}/${LAUNCHD_LABEL}`,
      enableLink: null,
    };
  }
  // systemd reads user units from $XDG_CONFIG_HOME/systemd/user, the parent of gw's config dir.
  const unitDir = join(dirname(configDir), "systemd/user");
  return {
    manager,
    name: SYSTEMD_UNIT,
    definitionPath: join(unitDir, SYSTEMD_UNIT),
    envFilePath,
    configDir,
    homeDir: host.homeDir,
    domain: "user",
    serviceRef: SYSTEMD_NAME,
    enableLink: join(unitDir, "default.target.wants", SYSTEMD_UNIT),
  };
}
