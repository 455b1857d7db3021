/**
 * Default locations (decisions.md): config dir `$XDG_CONFIG_HOME/gw` or `~/.config/gw`; data dir
 * `~/Library/Application Support/gw` on macOS, `$XDG_DATA_HOME/gw` or `~/.local/share/gw` elsewhere;
 * logs `~/Library/Logs/gw` on macOS, `~/.local/state/gw/logs` elsewhere. Pure: the host is passed in.
 */
import { isAbsolute, join, resolve } from "node:path";

export interface HostInfo {
  platform: NodeJS.Platform;
  homeDir: string;
  cwd: string;
}

export interface DefaultDirs {
  configDir: string;
  dataDir: string;
  logDir: string;
}

export function defaultDirs(env: Record<string, string | undefined>, host: HostInfo): DefaultDirs {
  const xdg = (name: string, fallback: string) => {
    const v = env[name];
    return v && isAbsolute(v) ? v : join(host.homeDir, fallback);
  };
  const mac = host.platform === "darwin";
  return {
    configDir: join(xdg("XDG_CONFIG_HOME", ".config"), "gw"),
    dataDir: mac
      ? join(host.homeDir, "Library/Application Support/gw")
      : join(xdg("XDG_DATA_HOME", ".local/share"), "gw"),
    logDir: mac ? join(host.homeDir, "Library/Logs/gw") : join(host.homeDir, ".local/state/gw/logs"),
  };
}

/** Expands a leading `~/` and resolves a relative path against the working directory. */
export function resolvePath(value: string, host: HostInfo): string {
  if (value === "~") return host.homeDir;
  if (value.startsWith("~/")) return join(host.homeDir, value.slice(2));
  return resolve(host.cwd, value);
}
