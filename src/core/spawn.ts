/**
 * The real Spawner (runner, built by the composition root): Bun.spawn with no shell, stdin written and
 * closed, output captured up to a cap, and the process killed (SIGKILL) at the deadline. A timed-out
 * run reports `timedOut`, so callers can treat its outcome as unknown rather than failed.
 */
import type { Spawner, SpawnResult } from "./ports.ts";

const OUTPUT_CAP_BYTES = 1024 * 1024;

async function readCapped(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let out = "";
  for await (const chunk of stream) {
    if (out.length < OUTPUT_CAP_BYTES) out += decoder.decode(chunk, { stream: true });
  }
  return out.slice(0, OUTPUT_CAP_BYTES);
}

export const bunSpawner: Spawner = {
  async run(argv, opts): Promise<SpawnResult> {
    const proc = Bun.spawn([...argv], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: opts.env });
    proc.stdin.write(opts.stdin);
    await proc.stdin.end();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.kill("SIGKILL");
    }, opts.timeoutMs);
    const [stdout, stderr, exitCode] = await Promise.all([
      readCapped(proc.stdout),
      readCapped(proc.stderr),
      proc.exited,
    ]);
    clearTimeout(timer);
    return { exitCode: timedOut ? null : exitCode, stdout, stderr, timedOut };
  },
};
