/**
 * Running gw as a real process: from source (`bun src/main.ts`, this checkout or another) or as the
 * compiled `dist/gw`, with an explicit environment (never the developer's GW_ variables), stopped with a
 * signal and SIGKILL after a grace; plus deadline-bounded waits and free ports. The one kit for process
 * start, stop and waits: bench/ uses it too (this module imports nothing from bench/ or test/ beside it).
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist/gw");

export interface GwProcess {
  proc: Subprocess;
  /** What it wrote so far (empty for a stream that was not piped). */
  output(): { stdout: string; stderr: string };
  exited: Promise<number>;
}

/**
 * Where a gw process's output goes: both streams piped and kept for output() (the default), both
 * dropped, stderr shown on ours (stdout dropped), or stderr appended to a file (stdout dropped).
 */
export type GwOutput = "pipe" | "ignore" | "inherit" | { stderrFile: string };

export function spawnGw(
  args: string[],
  env: Record<string, string>,
  opts: { binary?: boolean; root?: string; output?: GwOutput } = {},
): GwProcess {
  const main = join(opts.root ?? ROOT, "src/main.ts");
  const cmd = opts.binary ? [BINARY, ...args] : [process.execPath, main, ...args];
  const output = opts.output ?? "pipe";
  const piped = output === "pipe";
  const proc = Bun.spawn(cmd, {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: env.HOME ?? process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: piped ? "pipe" : "ignore",
    stderr: typeof output === "object" ? Bun.file(output.stderrFile) : output,
  });
  const out = { stdout: "", stderr: "" };
  const pump = async (stream: unknown, sink: (s: string) => void) => {
    if (!(stream instanceof ReadableStream)) return;
    const decoder = new TextDecoder();
    for await (const chunk of stream as ReadableStream<Uint8Array>)
      sink(decoder.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([
    pump(proc.stdout, (s) => {
      out.stdout += s;
    }),
    pump(proc.stderr, (s) => {
      out.stderr += s;
    }),
  ]);
  return {
    proc,
    output: () => ({ ...out }),
    exited: proc.exited.then(async (code) => {
      await drained;
      return code;
    }),
  };
}

/** Sends `signal` (unless it has ended), then SIGKILL after `killAfterMs`; resolves with the exit code. */
export async function stopGw(gw: GwProcess, signal: NodeJS.Signals = "SIGTERM", killAfterMs = 10_000) {
  if (gw.proc.exitCode === null && gw.proc.signalCode === null) gw.proc.kill(signal);
  const killer = setTimeout(() => gw.proc.kill("SIGKILL"), killAfterMs);
  try {
    return await gw.exited;
  } finally {
    clearTimeout(killer);
  }
}

/** `probe` as waitFor runs it, failing at once (with the end of its stderr) if the process exits first. */
export function waitWhileRunning<T>(
  gw: GwProcess,
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  return Promise.race([
    waitFor(probe, what, timeoutMs),
    gw.exited.then((code): never => {
      throw new Error(`exited with ${code} before ${what}: ${gw.output().stderr.slice(-2000)}`);
    }),
  ]);
}

/** Polls `probe` every `intervalMs` until it returns a value other than undefined, or fails at the deadline. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(intervalMs);
  }
}

export function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port as number;
  server.stop(true);
  return port;
}

/** GET /healthz on the port every `intervalMs` until it answers 200; resolves with its body. */
export async function waitForHealth(
  port: number,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        return res.ok ? ((await res.json()) as Record<string, unknown>) : undefined;
      } catch {
        return undefined;
      }
    },
    `/healthz on port ${port}`,
    timeoutMs,
    intervalMs,
  );
}

/**
 * GET /healthz until every connector named in `states` reports its state there (e.g. `{ community_chat:
 * "ok" }`); resolves with the body.
 */
export function waitForConnectors(
  port: number,
  states: Record<string, string>,
  what = Object.entries(states)
    .map(([name, state]) => `${name} ${state}`)
    .join(" and "),
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  return waitFor(
    async () => {
      const h = (await waitForHealth(port, timeoutMs)) as { connectors?: Record<string, { state: string }> };
      return Object.entries(states).every(([name, state]) => h.connectors?.[name]?.state === state)
        ? h
        : undefined;
    },
    what,
    timeoutMs,
  );
}

/**
 * Waits until the gw process logging to `<dir>/logs/current.log` has logged "allowlist loaded" `times`
 * times: once at start, once more for each reload (SIGHUP after `gw allow`).
 */
export function waitForAllowlistLoads(dir: string, times: number): Promise<true> {
  return waitFor(
    () =>
      readFileSync(join(dir, "logs/current.log"), "utf8").split('"allowlist loaded"').length === times + 1
        ? true
        : undefined,
    times > 1 ? "the reload" : "the allowlist",
  );
}

/**
 * Spawns `gw serve` with `env` (on its GW_BIND_PORT; the compiled binary with `binary`) and resolves once
 * /healthz answers, and, with `connectors`, once those connectors report those states.
 */
export async function startServe(
  env: Record<string, string>,
  opts: { binary?: boolean; connectors?: Record<string, string> } = {},
): Promise<GwProcess> {
  const gw = spawnGw(["serve"], env, opts.binary ? { binary: true } : {});
  const port = Number(env.GW_BIND_PORT);
  await waitForHealth(port);
  if (opts.connectors) await waitForConnectors(port, opts.connectors);
  return gw;
}

/** Builds dist/gw with the project's own build script unless a build newer than every source exists. */
export async function ensureBinary(): Promise<string> {
  if (!existsSync(BINARY) || statSync(BINARY).mtimeMs < newestSourceMtime()) {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`bun run build failed: ${build.stderr.toString()}`);
  }
  return BINARY;
}

function newestSourceMtime(): number {
  let newest = statSync(join(ROOT, "package.json")).mtimeMs;
  for (const f of new Bun.Glob("src/**/*.ts").scanSync({ cwd: ROOT })) {
    newest = Math.max(newest, statSync(join(ROOT, f)).mtimeMs);
  }
  return newest;
}

/** An environment that keeps every path of a gw process inside `dir`. */
export function isolatedEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOME: dir,
    GW_BEARER_TOKEN: "test-token-0123456789abcdef",
    GW_DB_PATH: join(dir, "data/gw.db"),
    GW_ATTACHMENT_DIR: join(dir, "data/attachments"),
    GW_LOG_DIR: join(dir, "logs"),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
    ...extra,
  };
}

/** Whether a process is alive (a zombie waiting to be reaped counts as dead). Linux: reads /proc. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Writes the Messages stand-in wrapper (`gw __messages-standin` from source) used as GW_OSASCRIPT_PATH. */
export function standInProgram(dir: string): string {
  const path = join(dir, "osascript");
  writeFileSync(
    path,
    `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, "src/main.ts")}' __messages-standin "$@"\n`,
  );
  chmodSync(path, 0o755);
  return path;
}
