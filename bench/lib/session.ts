/**
 * The lifetime of one benchmark run: its temp dirs and the processes it started (lib/child.ts children,
 * and every bare subprocess it tracks or lib/child.ts trackSpawned counts), all removed or stopped by
 * `cleanup()`, which also runs on SIGINT/SIGTERM (exit 130). With `keep` the temp dirs stay and are
 * named on stderr.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { live, spawned, trackSpawned } from "./child.ts";

export interface Session {
  tempDir(prefix: string): string;
  /** Removes a dir now, or at cleanup when it is one of ours. */
  own(dir: string): void;
  track(proc: Subprocess): void;
  cleanup(): void;
}

export function startSession(progress: (s: string) => void, keep: boolean): Session {
  const dirs = new Set<string>();
  let cleaned = false;
  const s: Session = {
    tempDir(prefix) {
      const d = mkdtempSync(join(tmpdir(), prefix));
      dirs.add(d);
      return d;
    },
    own(dir) {
      dirs.add(dir);
    },
    track(proc) {
      trackSpawned(proc);
    },
    cleanup() {
      if (cleaned) return;
      cleaned = true;
      for (const c of live) c.proc.kill("SIGKILL");
      for (const p of spawned) p.kill("SIGKILL");
      for (const d of dirs) {
        if (keep) progress(`kept ${d}`);
        else rmSync(d, { recursive: true, force: true });
      }
    },
  };
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      s.cleanup();
      process.exit(130);
    });
  }
  return s;
}
