/**
 * A parent program for the Spawner's parent-death test: runs one program through the real bunSpawner
 * (as gw receiver runs an agent, as gw serve runs osascript) and waits for it. The program is
 * `sh -c '<script>'` with the pid-file path as $1; the test kills this parent with SIGKILL while the run
 * is live and checks that nothing of the run's process group survives it.
 * Usage: bun spawner-parent.ts <pid file>
 */
import { bunSpawner } from "../../src/core/spawn.ts";

const pidFile = process.argv[2] as string;
// The run: a child that records its pid and its grandchild's (which ignores SIGTERM), then waits.
const script = `sh -c 'trap "" TERM; sleep 60' & echo "$$ $!" > "$1"; wait`;
await bunSpawner.run(["sh", "-c", script, "run", pidFile], {
  stdin: "",
  timeoutMs: 60_000,
  env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
});
