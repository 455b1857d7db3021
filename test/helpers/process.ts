/**
 * Running gw as a real process: from source (`bun src/main.ts`) or as the compiled `dist/gw`,
 * with an explicit environment (never the developer's GW_ variables), plus deadline-bounded waits.
 */
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "../..");
export const BINARY = join(ROOT, "dist/gw");

export interface GwProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  output(): { stdout: string; stderr: string };
  exited: Promise<number>;
}

export function spawnGw(
  args: string[],
  env: Record<string, string>,
  opts: { binary?: boolean } = {},
): GwProcess {
  const cmd = opts.binary ? [BINARY, ...args] : [process.execPath, join(ROOT, "src/main.ts"), ...args];
  const proc = Bun.spawn(cmd, {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: env.HOME ?? process.env.HOME ?? "/tmp", ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = { stdout: "", stderr: "" };
  const pump = async (stream: ReadableStream<Uint8Array>, sink: (s: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) sink(decoder.decode(chunk, { stream: true }));
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

/** Polls `probe` until it returns a value other than undefined, or fails at the deadline. */
export async function waitFor<T>(
  probe: () => T | undefined | Promise<T | undefined>,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(25);
  }
}

export function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port as number;
  server.stop(true);
  return port;
}

export async function waitForHealth(port: number, timeoutMs = 10_000): Promise<Record<string, unknown>> {
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
  );
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
