/**
 * Regression: a run's process group must not outlive the process that started it, even when that
 * process is killed with SIGKILL and gets no chance to stop the group (gw receiver killed mid-run left
 * its agent and the agent's children running for ever). The parent here is a real Bun process running
 * the real Spawner (test/fakes/spawner-parent.ts).
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isAlive, ROOT, waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

test("kill -9 of the spawning process: the run's process group (grandchild included) is gone within 2 s", async () => {
  const pidFile = join(tempDir(), "pids");
  const parent = Bun.spawn([process.execPath, join(ROOT, "test/fakes/spawner-parent.ts"), pidFile], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
  });
  const [child, grandchild] = await waitFor(() => {
    const text = existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() : "";
    const pids = text.split(" ").map(Number);
    return pids.length === 2 && pids.every((p) => p > 0) ? (pids as [number, number]) : undefined;
  }, "the run to start");
  try {
    parent.kill("SIGKILL");
    await parent.exited;
    await waitFor(
      () => (isAlive(child) || isAlive(grandchild) ? undefined : true),
      "the run's process group to be gone after its parent died",
      2_000,
    );
  } finally {
    // Whatever the outcome, leave nothing behind.
    for (const pid of [child, grandchild])
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
  }
  expect(isAlive(child)).toBe(false);
  expect(isAlive(grandchild)).toBe(false);
});
