/**
 * bench/api/api.ts's timed load runs: a fresh server process per run, an untimed warm-up, then
 * BENCH_DURATION_S under wrk (or bench/api/load.ts) at BENCH_CONNECTIONS connections with X-Agent-ID
 * rotating over a mix's agents; the server's CPU (/proc/<pid>/stat) and the other processes' share of
 * the CPUs (/proc/stat minus the server and the load generator). Rounds in ABBA order; a run during
 * which other processes were busy is repeated (twice at most). Percentiles under wrk are wrk's own.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { trackSpawned } from "../lib/child.ts";
import { stopServer } from "../lib/http-server.ts";
import { machineProcessMs, waitQuiet } from "../lib/machine.ts";
import { procCpuMs } from "../lib/proc.ts";
import { TOKEN } from "../lib/settings.ts";
import { startTarget, type Target } from "./servers.ts";
import {
  AGENTS,
  CONNECTIONS,
  DURATION_S,
  fmt,
  LIGHT,
  LOADGEN,
  MAX_OTHER,
  progress,
  QUIET_WAIT_S,
  ROUNDS,
  THREADS,
  UNREAD_PATH,
  WARMUP_S,
  WRK,
} from "./settings.ts";

/** A request mix: which agents the X-Agent-ID header rotates over. */
export interface Mix {
  name: string;
  agents: readonly string[];
  rounds: number;
  script: string;
}

export interface Load {
  /** CPU time the load generator used (from its rusage), ms. */
  loadgenCpuMs: number | null;
  requests: number;
  seconds: number;
  non2xx: number;
  errors: number;
  bytes: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function wrkScript(dir: string, name: string, agents: readonly string[]): string {
  const path = join(dir, `${name}.lua`);
  writeFileSync(
    path,
    `-- X-Agent-ID rotates over the agents, one per request (each wrk thread has its own counter).
local agents = { ${agents.map((a) => `"${a}"`).join(", ")} }
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer ${TOKEN}", ["X-Agent-ID"] = agents[(n % #agents) + 1] })
end
`,
  );
  return path;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNIT_BYTES: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

function parseWrk(out: string): Omit<Load, "loadgenCpuMs"> {
  const ms = (label: string): number => {
    const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, "m").exec(out);
    if (!m) throw new Error(`wrk output has no ${label}% line:\n${out}`);
    return Number(m[1]) * (UNIT_MS[m[2] as string] ?? Number.NaN);
  };
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h), ([\d.]+)(B|KB|MB|GB|TB) read/.exec(out);
  const max = /^\s*Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m|h)/m.exec(out);
  if (!total || !max) throw new Error(`cannot parse wrk output:\n${out}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(total[1]),
    seconds: (Number(total[2]) * (UNIT_MS[total[3] as string] ?? Number.NaN)) / 1000,
    bytes: Number(total[4]) * (UNIT_BYTES[total[5] as string] ?? Number.NaN),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: socket ? socket.slice(1).reduce((s, x) => s + Number(x), 0) : 0,
    p50: ms("50"),
    p90: ms("90"),
    p99: ms("99"),
    max: Number(max[1]) * (UNIT_MS[max[2] as string] ?? Number.NaN),
  };
}

export async function runLoad(port: number, seconds: number, mix: Mix): Promise<Load> {
  const url = `http://127.0.0.1:${port}${UNREAD_PATH}`;
  const cmd =
    LOADGEN === "wrk"
      ? [WRK as string, "-t", String(THREADS), "-c", String(CONNECTIONS), "-d", `${seconds}s`].concat([
          "--latency",
          "--timeout",
          "5s",
          "-s",
          mix.script,
          url,
        ])
      : [
          process.execPath,
          join(import.meta.dir, "load.ts"),
          JSON.stringify({ url, connections: CONNECTIONS, seconds, token: TOKEN, agents: mix.agents }),
        ];
  const proc = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  trackSpawned(proc);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`load generator exited with ${code}: ${err}${out}`);
  const usage = proc.resourceUsage();
  const loadgenCpuMs = usage ? Number(usage.cpuTime.total) / 1000 : null;
  if (LOADGEN === "wrk") return { loadgenCpuMs, ...parseWrk(out) };
  const j = JSON.parse(out) as Record<string, number>;
  return {
    loadgenCpuMs,
    requests: j.requests ?? 0,
    seconds: j.seconds ?? 0,
    non2xx: j.non2xx ?? 0,
    errors: j.errors ?? 0,
    bytes: j.bytes ?? 0,
    p50: j.p50_ms ?? Number.NaN,
    p90: j.p90_ms ?? Number.NaN,
    p99: j.p99_ms ?? Number.NaN,
    max: j.max_ms ?? Number.NaN,
  };
}

export interface RunResult extends Load {
  mix: string;
  target: Target;
  round: number;
  rps: number;
  serverCpuMs: number | null;
  /** Share of the machine's CPU used by processes other than the server and the load generator. */
  otherCpuShare: number | null;
  /** 1, or more when the run was repeated because other processes were busy. */
  attempts: number;
}

export interface Summary {
  rps: number;
  /** Mean of the runs' p50. */
  p50: number;
  /** Worst of the runs' p99. */
  p99: number;
  bytesPerRequest: number;
  cpuUsPerRequest: number | null;
  failures: number;
}

/** One timed load run: a fresh server process, an untimed warm-up, the timed run, then stop. */
export async function loadRun(
  target: Target,
  dir: string,
  baseUrl: string,
  mix: Mix,
  round: number,
): Promise<RunResult> {
  await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const server = await startTarget(target, dir, baseUrl);
  if (WARMUP_S > 0) await runLoad(server.port, WARMUP_S, mix);
  const busy0 = machineProcessMs();
  const cpu0 = procCpuMs(server.proc.pid)?.self ?? null;
  const load = await runLoad(server.port, DURATION_S, mix);
  const cpu1 = procCpuMs(server.proc.pid)?.self ?? null;
  const busy1 = machineProcessMs();
  await stopServer(server);
  const serverCpuMs = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
  const r: RunResult = {
    mix: mix.name,
    target,
    round,
    ...load,
    rps: load.requests / load.seconds,
    serverCpuMs,
    otherCpuShare:
      busy0 !== null && busy1 !== null && serverCpuMs !== null && load.loadgenCpuMs !== null
        ? Math.max(0, busy1 - busy0 - serverCpuMs - load.loadgenCpuMs) /
          (load.seconds * 1000 * navigator.hardwareConcurrency)
        : null,
    attempts: 1,
  };
  progress(
    `  ${mix.name}, round ${round}, ${target}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms` +
      (r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} socket errors` : "") +
      (r.otherCpuShare === null ? "" : `, other processes ${fmt(r.otherCpuShare * 100)}% of the CPUs`),
  );
  // A rate of refused or broken requests measures nothing: every request must be answered 200.
  if (r.non2xx + r.errors > 0)
    throw new Error(
      `${target} answered ${r.non2xx} non-2xx and ${r.errors} socket errors: no figure from this run`,
    );
  return r;
}

/**
 * The 10-agent mix (and, with BENCH_LIGHT, the agent-0-only mix), BENCH_ROUNDS rounds each in ABBA
 * order, one server at a time; a run during which other processes took a noticeable share of the CPUs
 * is repeated (twice at most).
 */
export async function loadAll(dir: string, baseUrl: string): Promise<{ mixes: Mix[]; runs: RunResult[] }> {
  const mixes: Mix[] = [
    { name: "10 agents", agents: AGENTS, rounds: ROUNDS, script: "" },
    ...(LIGHT ? [{ name: "agent-0 only", agents: ["agent-0"], rounds: ROUNDS, script: "" }] : []),
  ].map((m, i) => ({ ...m, script: wrkScript(dir, `mix${i}`, m.agents) }));
  const runs: RunResult[] = [];
  progress("load");
  for (const mix of mixes) {
    for (let round = 1; round <= mix.rounds; round++) {
      const order: Target[] = round % 2 === 1 ? ["raw", "bare", "gateway"] : ["gateway", "bare", "raw"];
      for (const target of order) {
        let r = await loadRun(target, dir, baseUrl, mix, round);
        for (let retry = 0; retry < 2 && r.otherCpuShare !== null && r.otherCpuShare > MAX_OTHER; retry++) {
          progress("  repeating that run: other processes were busy");
          r = await loadRun(target, dir, baseUrl, mix, round);
          r.attempts = retry + 2;
        }
        runs.push(r);
      }
    }
  }
  return { mixes, runs };
}
