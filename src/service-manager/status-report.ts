/**
 * What `gw service status` prints (pure): the service state and the /healthz probe as aligned lines
 * ending with one verdict (ok, or what is wrong and what to do), or the same as JSON. OK means
 * installed, running and answering HTTP 200 with gw's health JSON.
 */
import { type HealthProbe, healthOk } from "./health-probe.ts";
import type { ServiceStatus } from "./status.ts";

export interface StatusReport {
  service: ServiceStatus;
  health: HealthProbe;
  envFilePath: string;
  envFileExists: boolean;
  /** launchd: the job's stdout/stderr files. */
  logs: { out: string; err: string } | null;
}

export function statusOk(r: StatusReport): boolean {
  const s = r.service;
  return s.problem === null && s.installed && s.loaded && s.running && healthOk(r.health);
}

export function verdict(r: StatusReport): string {
  const s = r.service;
  const launchd = s.manager === "launchd";
  const logs = launchd
    ? `see ${r.logs?.err ?? "launchd.err.log in the log dir"}`
    : "see `journalctl --user -u gw`";
  if (s.problem !== null) return `FIX: cannot read the service state: ${s.problem}`;
  if (!s.installed && !s.loaded) return "FIX: not installed. Run `gw service install`.";
  if (!s.installed) return `FIX: loaded, but ${s.definitionPath} is missing. Run \`gw service install\`.`;
  if (!s.loaded)
    return launchd
      ? "FIX: installed but not loaded. Run `gw service install` (it loads it again)."
      : "FIX: installed but not loaded. Run `systemctl --user daemon-reload && systemctl --user enable --now gw`.";
  if (!s.running)
    return `FIX: loaded but not running${s.lastExit === null ? "" : ` (last exit ${s.lastExit})`}; ${logs}.`;
  if (!healthOk(r.health)) {
    const what = r.health.error ?? `HTTP ${r.health.httpStatus}`;
    return `FIX: running, but ${r.health.url} does not answer as gw (${what}); ${logs}, and check GW_BIND_HOST/GW_BIND_PORT in ${r.envFilePath}.`;
  }
  return `ok: installed, running and answering on ${r.health.url}`;
}

export function statusText(r: StatusReport): string {
  const s = r.service;
  const h = r.health;
  const yes = (b: boolean) => (b ? "yes" : "no");
  const rows: [string, string][] = [
    [s.manager === "launchd" ? "plist" : "unit", s.definitionPath],
    ["env file", `${r.envFilePath}${r.envFileExists ? "" : " (absent: defaults assumed)"}`],
    ["installed", yes(s.installed)],
    ["loaded", yes(s.loaded)],
    ["running", s.running ? `yes${s.pid === null ? "" : ` (pid ${s.pid})`}` : "no"],
  ];
  if (s.lastExit !== null) rows.push(["last exit", s.lastExit]);
  if (s.program !== null) rows.push(["program", s.program]);
  rows.push(["health", healthLine(h)]);
  const title = s.manager === "launchd" ? `launchd job ${s.name}` : `systemd user unit ${s.name}`;
  return `gw service: ${title}\n${rows.map(([k, v]) => `  ${k.padEnd(10)}  ${v}`).join("\n")}\n${verdict(r)}\n`;
}

function healthLine(h: HealthProbe): string {
  if (!h.answered) return `${h.url}: no answer (${h.error})`;
  const parts = [`HTTP ${h.httpStatus}`];
  if (h.status !== null) parts.push(`status ${h.status}`);
  if (h.version !== null) parts.push(`gw ${h.version}`);
  if (h.error !== null) parts.push(h.error);
  const connectors = h.connectors
    ? ` (${Object.entries(h.connectors)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")})`
    : "";
  return `${h.url}: ${parts.join(", ")}${connectors}`;
}

export function statusJson(r: StatusReport): Record<string, unknown> {
  const s = r.service;
  const h = r.health;
  return {
    ok: statusOk(r),
    manager: s.manager,
    name: s.name,
    definition_path: s.definitionPath,
    env_file: r.envFilePath,
    env_file_exists: r.envFileExists,
    installed: s.installed,
    loaded: s.loaded,
    running: s.running,
    pid: s.pid,
    last_exit_code: s.lastExitCode,
    last_exit: s.lastExit,
    program: s.program,
    problem: s.problem,
    logs: r.logs,
    health: {
      url: h.url,
      answered: h.answered,
      ok: healthOk(h),
      http_status: h.httpStatus,
      status: h.status,
      version: h.version,
      connectors: h.connectors,
      error: h.error,
    },
    verdict: verdict(r),
  };
}
