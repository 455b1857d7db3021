/**
 * The login service's state, for `gw service status` and `gw doctor`: installed (its plist or unit
 * file exists), loaded, running, pid, last exit. Never prints and never throws for the service's own
 * troubles: a launchctl/systemctl that is missing or fails is reported in `problem`.
 */
import { existsSync } from "node:fs";
import type { HostInfo } from "../config/paths.ts";
import type { Spawner } from "../core/ports.ts";
import { ServiceError } from "./errors.ts";
import { launchdState } from "./launchd.ts";
import { systemdState } from "./systemd.ts";
import { type ServiceManagerKind, type ServiceTarget, serviceTarget } from "./target.ts";
import { createToolRunner, type RunTool } from "./tools.ts";

export interface ServiceStatus {
  manager: ServiceManagerKind;
  /** dev.gw.serve or gw.service. */
  name: string;
  definitionPath: string;
  /** The plist or unit file exists. */
  installed: boolean;
  /** launchd knows the job / systemd has the unit loaded. */
  loaded: boolean;
  running: boolean;
  pid: number | null;
  /** Exit status of the last run; null when unknown or it never exited. */
  lastExitCode: number | null;
  /** The last exit as the manager wrote it, e.g. "(never exited)" or "78: EX_CONFIG". */
  lastExit: string | null;
  /** launchd: the program the job runs. */
  program: string | null;
  /** Why the state could not be read (e.g. launchctl not on PATH); null when it was. */
  problem: string | null;
}

export async function readServiceStatus(target: ServiceTarget, run: RunTool): Promise<ServiceStatus> {
  const base: ServiceStatus = {
    manager: target.manager,
    name: target.name,
    definitionPath: target.definitionPath,
    installed: existsSync(target.definitionPath),
    loaded: false,
    running: false,
    pid: null,
    lastExitCode: null,
    lastExit: null,
    program: null,
    problem: null,
  };
  try {
    if (target.manager === "launchd") {
      const s = await launchdState(target, run);
      if (!s.loaded) return base;
      const running = s.info.state === "running";
      return {
        ...base,
        loaded: true,
        running,
        pid: running ? s.info.pid : null,
        lastExitCode: s.info.lastExitCode,
        lastExit: s.info.lastExit,
        program: s.info.program,
      };
    }
    const s = await systemdState(target, run);
    const running = s.activeState === "active";
    return {
      ...base,
      loaded: s.loadState === "loaded",
      running,
      pid: running ? s.mainPid : null,
      lastExitCode: s.execMainStatus,
      lastExit: s.execMainStatus === null ? null : String(s.execMainStatus),
    };
  } catch (err) {
    if (!(err instanceof ServiceError)) throw err;
    return { ...base, problem: err.message.replace(/^gw service: /, "") };
  }
}

export interface StatusPorts {
  /** Config's serviceManager (GW_SERVICE_MANAGER, else by platform). */
  manager: ServiceManagerKind;
  /** For PATH (to find launchctl/systemctl), HOME and XDG_CONFIG_HOME. */
  env: Record<string, string | undefined>;
  host: HostInfo;
  /** process.getuid(): the launchd domain is gui/<uid>. */
  uid: number;
  spawner: Spawner;
}

/** The whole lookup in one call, for `gw doctor`. */
export async function getServiceStatus(ports: StatusPorts): Promise<ServiceStatus> {
  const target = serviceTarget(ports.manager, ports.env, ports.host, ports.uid);
  return readServiceStatus(target, createToolRunner(ports.spawner, ports.env));
}
