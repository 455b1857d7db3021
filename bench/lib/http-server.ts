/**
 * A benchmark's HTTP servers, each a child process `bun <script> <mode> <work dir> <port>` on a free
 * port, ready once it prints `ready <port>` (lib/child-protocol.ts serverArgs and readyUntilSignal on
 * its side): gw's app as `gw serve` builds it (GW_SERVER, lib/gw-server.ts) or a room's bare baseline.
 * Each gets this run's bearer (BENCH_TOKEN) and, where given, the attachment URL base (BENCH_BASE_URL),
 * and is counted by lib/child.ts trackSpawned, so a session's cleanup kills it.
 */
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../../test/helpers/process.ts";
import { trackSpawned } from "./child.ts";
import { PATH, TOKEN } from "./settings.ts";

/** gw's API on a seeded work dir, as `gw serve` builds it. */
export const GW_SERVER = join(import.meta.dir, "gw-server.ts");

export interface Server {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  stderr: () => string;
}

/** Starts `script <mode> <dir> <port>` and waits (at most 30 s) for its ready line. */
export async function startServer(script: string, mode: string, dir: string, baseUrl = ""): Promise<Server> {
  const port = freePort();
  const proc = Bun.spawn([process.execPath, script, mode, dir, String(port)], {
    env: { PATH, HOME: dir, BENCH_TOKEN: TOKEN, BENCH_BASE_URL: baseUrl },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  trackSpawned(proc);
  let err = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  })();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  // One timer for the whole wait, cleared once ready: a pending sleep would keep this process alive.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), 30_000);
  });
  try {
    while (!out.includes("ready ")) {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (chunk === null || chunk.done) throw new Error(`${mode} server did not start:\n${out}${err}`);
      out += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
  reader.releaseLock();
  return { proc, port, stderr: () => err };
}

/** gw's server on `dir` (its data/gw.db and allowlist.toml). */
export const startGwServer = (dir: string): Promise<Server> => startServer(GW_SERVER, "gateway", dir);

export async function stopServer(s: Server): Promise<void> {
  s.proc.kill("SIGTERM");
  const code = await s.proc.exited;
  if (code !== 0) throw new Error(`server exited with ${code}:\n${s.stderr()}`);
}
