/**
 * Start-up as bench/startup/startup.ts measures it, shared with bench/contacts/contacts.ts: a binary built with given
 * flags (`buildBinary`), and `timeServe`: spawn a server on a fresh home under `root` (so creating the
 * database and its migrations counts), GET /healthz every millisecond until the first 200, and return
 * spawn → that answer in ms. `afterHealthy` runs (untimed) before the process is killed.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../../test/helpers/process.ts";

const ROOT = join(import.meta.dir, "../..");

export function buildBinary(entry: string, out: string, flags: readonly string[]): string {
  const r = Bun.spawnSync([process.execPath, "build", entry, ...flags, "--outfile", out], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`build of ${entry} failed: ${r.stderr.toString()}`);
  return out;
}

export interface ServeRun {
  /** Where each run's home is made. */
  root: string;
  /** Settings added to the run's environment. */
  env?: Record<string, string>;
  /** Runs after the first 200, before the kill, with the run's home. */
  afterHealthy?: (home: string) => Promise<void>;
}

export async function timeServe(bin: string, args: string[], run: ServeRun): Promise<number> {
  const port = freePort();
  const home = mkdtempSync(join(run.root, "run-"));
  const t0 = performance.now();
  const proc = Bun.spawn([bin, ...args], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      GW_BEARER_TOKEN: "bench-token",
      GW_BIND_PORT: String(port),
      GW_DB_PATH: join(home, "gw.db"),
      GW_LOG_DIR: join(home, "logs"),
      GW_ALLOWLIST_PATH: join(home, "allowlist.toml"),
      GW_ATTACHMENT_DIR: join(home, "att"),
      GW_CHAT_DB_PATH: join(home, "no-chat.db"),
      ...run.env,
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  const deadline = t0 + 10_000;
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) {
        const ms = performance.now() - t0;
        await run.afterHealthy?.(home);
        return ms;
      }
      if (performance.now() > deadline) throw new Error(`${bin} did not answer /healthz within 10 s`);
      await Bun.sleep(1);
    }
  } finally {
    proc.kill("SIGKILL");
    await proc.exited;
  }
}
