/**
 * The real Spawner (runner, built by the composition root): Bun.spawn with no shell, in a process group of
 * its own, stdin written and closed, output captured up to OUTPUT_CAP_BYTES per stream. The group outlives
 * neither the run nor this process, even when this process is killed with SIGKILL (a descendant that leaves
 * the group with setsid() is beyond reach). A run stopped at its deadline or by its abort `signal` reports
 * `timedOut`, so callers can treat its outcome as unknown rather than failed.
 */
import type { Spawner, SpawnResult } from "./ports.ts";

export const OUTPUT_CAP_BYTES = 1024 * 1024;
export const DEFAULT_KILL_GRACE_MS = 5_000;
export const PIPE_GRACE_MS = 5_000;

async function readCapped(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let out = "";
  for await (const chunk of stream) {
    if (out.length < OUTPUT_CAP_BYTES) out += decoder.decode(chunk, { stream: true });
  }
  return out.slice(0, OUTPUT_CAP_BYTES);
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** Reads its stdin to the end, then SIGKILLs the process group $1: only a dead parent ends it that way. */
const GUARD_SCRIPT = 'while read -r _; do :; done; kill -KILL -"$1" 2>/dev/null';

/**
 * Kills the group `pid` when this process dies (even by SIGKILL) before `stop` is called: a `/bin/sh` in a
 * session of its own waits on a pipe only this process holds, and kills the group when the pipe closes.
 */
function guardGroup(pid: number): { stop(): void } {
  let guard: ReturnType<typeof Bun.spawn>;
  try {
    guard = Bun.spawn(["/bin/sh", "-c", GUARD_SCRIPT, "gw-spawn-guard", String(pid)], {
      stdin: "pipe",
      stdout: "ignore",
      stderr: "ignore",
      env: {},
      detached: true,
    });
  } catch {
    // No /bin/sh: the run goes on without the safety net (the deadline and stop still hold).
    return { stop: () => {} };
  }
  guard.unref();
  return { stop: () => guard.kill("SIGKILL") };
}

/**
 * At the deadline or on abort the whole group gets SIGTERM, then SIGKILL after the grace; once the program
 * has exited, its pipes get PIPE_GRACE_MS to close and whatever is left of the group is killed.
 */
export const bunSpawner: Spawner = {
  async run(argv, opts): Promise<SpawnResult> {
    const proc = Bun.spawn([...argv], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: opts.env,
      detached: true,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    });
    const guard = guardGroup(proc.pid);
    const output = Promise.all([readCapped(proc.stdout), readCapped(proc.stderr)]);
    let timedOut = false;
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const stopGroup = () => {
      if (timedOut) return;
      timedOut = true;
      killGroup(proc.pid, "SIGTERM");
      killTimer = setTimeout(() => killGroup(proc.pid, "SIGKILL"), opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
    };
    const deadline = setTimeout(stopGroup, opts.timeoutMs);
    opts.signal?.addEventListener("abort", stopGroup);
    try {
      proc.stdin.write(opts.stdin);
      await proc.stdin.end();
    } catch {
      // The program exited (or closed stdin) before reading it all.
    }
    const exitCode = await proc.exited;
    clearTimeout(deadline);
    opts.signal?.removeEventListener("abort", stopGroup);
    // After a timeout the group's SIGKILL is already scheduled; otherwise the pipes get their grace.
    if (!timedOut) {
      let pipeTimer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        output,
        new Promise<void>((resolve) => {
          pipeTimer = setTimeout(resolve, opts.pipeGraceMs ?? PIPE_GRACE_MS);
        }),
      ]);
      clearTimeout(pipeTimer);
      killGroup(proc.pid, "SIGKILL");
    }
    const [stdout, stderr] = await output;
    clearTimeout(killTimer);
    killGroup(proc.pid, "SIGKILL");
    guard.stop();
    return {
      exitCode: timedOut ? null : exitCode,
      signal: proc.signalCode === null ? null : String(proc.signalCode),
      stdout,
      stderr,
      timedOut,
    };
  },
};
