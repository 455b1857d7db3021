/**
 * `gw service install` and `uninstall` (runners). Install creates the env file once (0600, never
 * overwritten), checks it as gw's configuration, writes the plist (0600: it holds the token) or the unit
 * whole or not at all, then loads it (launchd) or returns the lines to run (systemd). Everything is computed
 * before the first write, so a refused value changes nothing. Uninstall always keeps the env file.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, lstatSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { HostInfo } from "../config/paths.ts";
import { envFileConfig } from "./env-config.ts";
import { initialEnvVars } from "./env-file.ts";
import { createEnvFile, readEnvFile } from "./env-file-store.ts";
import { ServiceError } from "./errors.ts";
import { launchdLoad, launchdUnload } from "./launchd.ts";
import { buildLaunchdPlist, launchdLogPaths } from "./launchd-plist.ts";
import { SYSTEMD_INSTALL_LINES, SYSTEMD_UNINSTALL_LINES } from "./systemd.ts";
import { buildSystemdUnit } from "./systemd-unit.ts";
import type { ServiceTarget } from "./target.ts";
import type { RunTool } from "./tools.ts";

export interface InstallPorts {
  target: ServiceTarget;
  host: HostInfo;
  /** The installing shell's environment: XDG dirs for a new env file, GW_ variables the file lacks. */
  shellEnv: Record<string, string | undefined>;
  /** selfCommand(): this program's absolute command. */
  self: readonly string[];
  run: RunTool;
  newToken: () => string;
}

export interface InstallReport {
  target: ServiceTarget;
  envFileCreated: boolean;
  /** launchd: where the job's stdout/stderr go. */
  logs: { out: string; err: string } | null;
  /** The program the service runs (the one to grant Full Disk Access on macOS). */
  program: string;
  /** launchd: an older loaded copy was booted out first. */
  replaced: boolean;
  /** systemd: the lines for the user to run. */
  nextCommands: string[];
  warnings: string[];
}

/**
 * A loaded launchd job is booted out first, so install is also "reinstall after an upgrade". A compiled gw is
 * run from a copy at a fixed path (copyProgram).
 */
export async function installService(p: InstallPorts): Promise<InstallReport> {
  const { target } = p;
  const existing = readEnvFile(target.envFilePath);
  const vars = existing?.vars ?? initialEnvVars(p.newToken(), p.shellEnv);
  const { config, warnings } = envFileConfig(vars, p.host, target.envFilePath, ["bearerToken"]);
  if (existing && (existing.mode & 0o077) !== 0)
    warnings.push(
      `${target.envFilePath} is readable by others (mode ${existing.mode.toString(8)}) and holds the token: chmod 600 ${target.envFilePath}`,
    );
  warnings.push(...shellOnlyWarnings(p.shellEnv, vars, target.envFilePath));

  const launchd = target.manager === "launchd";
  const logs = launchd ? launchdLogPaths(config.logDir) : null;
  const self = p.self.length === 1 ? [join(dirname(config.dbPath), "bin", "gw")] : p.self;
  const definition = launchd
    ? buildLaunchdPlist({ self, environment: vars, logDir: config.logDir, homeDir: target.homeDir })
    : buildSystemdUnit({ self, envFilePath: target.envFilePath });

  if (!existing) createEnvFile(target.envFilePath, vars);
  if (p.self.length === 1) copyProgram(p.self[0] as string, self[0] as string);
  try {
    if (logs) mkdirSync(dirname(logs.out), { recursive: true, mode: 0o700 });
    writeWhole(target.definitionPath, definition, launchd ? 0o600 : 0o644);
  } catch (err) {
    throw new ServiceError(`gw service: cannot write ${target.definitionPath}: ${(err as Error).message}`);
  }
  const replaced = launchd ? (await launchdLoad(target, p.run)).replaced : false;
  return {
    target,
    envFileCreated: !existing,
    logs,
    program: self[0] as string,
    replaced,
    nextCommands: launchd ? [] : [...SYSTEMD_INSTALL_LINES],
    warnings,
  };
}

export interface UninstallReport {
  target: ServiceTarget;
  /** launchd: the job was loaded and is now booted out. */
  unloaded: boolean;
  /** The plist or unit file existed and is removed. */
  removed: boolean;
  /** systemd: the default.target.wants link (what `systemctl --user enable` made) is removed. */
  enableLinkRemoved: boolean;
  envFileKept: boolean;
  nextCommands: string[];
}

/** Unloads the job (launchd), removes the plist or the unit and its enable link; the env file stays. */
export async function uninstallService(p: { target: ServiceTarget; run: RunTool }): Promise<UninstallReport> {
  const { target } = p;
  const unloaded = target.manager === "launchd" ? await launchdUnload(target, p.run) : false;
  const removed = removeIf(target.definitionPath, () => true);
  const enableLinkRemoved =
    target.enableLink !== null && removeIf(target.enableLink, (path) => lstatSync(path).isSymbolicLink());
  return {
    target,
    unloaded,
    removed,
    enableLinkRemoved,
    envFileKept: exists(target.envFilePath),
    nextCommands: target.manager === "systemd" ? [...SYSTEMD_UNINSTALL_LINES] : [],
  };
}

/** GW_ variables the installing shell sets that the service will not see as they are (names only). */
function shellOnlyWarnings(
  shellEnv: Record<string, string | undefined>,
  vars: ReadonlyArray<readonly [string, string]>,
  envFilePath: string,
): string[] {
  const file = new Map(vars);
  const names = Object.entries(shellEnv)
    .filter(([k, v]) => k.startsWith("GW_") && k !== "GW_SERVICE_MANAGER" && v && file.get(k) !== v)
    .map(([k]) => k)
    .sort();
  if (names.length === 0) return [];
  return [
    `your shell sets ${names.join(", ")}, but the service reads only ${envFilePath}, where ${names.length === 1 ? "it is" : "they are"} missing or different; add ${names.length === 1 ? "it" : "them"} there if the service needs ${names.length === 1 ? "it" : "them"}, and give clients the file's GW_BEARER_TOKEN`,
  ];
}

/**
 * The compiled binary the service runs is a copy at one fixed path (<data dir>/bin/gw): macOS ties Full
 * Disk Access and Automation to a binary's path and signature, and a Homebrew upgrade moves the
 * installed binary to a new versioned path; installing again after an upgrade copies the new, same-signed
 * binary over the old one at the same path, so the grants stay. (From source the command is used as it is.)
 */
function copyProgram(from: string, to: string): void {
  if (from === to) return;
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  const tmp = join(dirname(to), `.${randomBytes(8).toString("hex")}.tmp`);
  try {
    copyFileSync(from, tmp);
    chmodSync(tmp, 0o755);
    renameSync(tmp, to);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new ServiceError(`gw service: cannot copy ${from} to ${to}: ${(err as Error).message}`);
  }
}

function writeWhole(path: string, text: string, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${randomBytes(8).toString("hex")}.tmp`);
  writeFileSync(tmp, text, { mode, flag: "wx" });
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function removeIf(path: string, ok: (path: string) => boolean): boolean {
  if (!exists(path) || !ok(path)) return false;
  try {
    rmSync(path);
  } catch (err) {
    throw new ServiceError(`gw service: cannot remove ${path}: ${(err as Error).message}`);
  }
  return true;
}
