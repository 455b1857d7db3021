/**
 * The real Spawner with real processes: argv only, stdin delivered, output captured; at the deadline the
 * whole process group goes (a grandchild that ignores SIGTERM included, after the grace); after a normal
 * exit, a descendant left holding the pipes is reaped too.
 */
import { expect, test } from "bun:test";
import { bunSpawner } from "../../src/core/spawn.ts";
import { isAlive, waitFor } from "../helpers/process.ts";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

test("argv and stdin reach the program, output and exit code come back", async () => {
  const r = await bunSpawner.run(
    ["sh", "-c", 'read line; echo "got $line and $1"; echo oops >&2; exit 3', "sh", "$(x)"],
    {
      stdin: "hello\n",
      timeoutMs: 5_000,
      env,
    },
  );
  expect(r).toEqual({
    exitCode: 3,
    signal: null,
    stdout: "got hello and $(x)\n",
    stderr: "oops\n",
    timedOut: false,
  });
});

test("at the deadline the group gets SIGTERM, and SIGKILL after the grace for what ignores it", async () => {
  const pidFile = `/tmp/gw-spawn-${crypto.randomUUID()}`;
  const t0 = performance.now();
  const r = await bunSpawner.run(
    ["sh", "-c", `sh -c 'trap "" TERM; echo $$ > ${pidFile}; sleep 30' & sleep 30`],
    { stdin: "", timeoutMs: 300, env, killGraceMs: 300 },
  );
  const took = performance.now() - t0;
  expect(r.timedOut).toBe(true);
  expect(r.exitCode).toBeNull();
  expect(took).toBeGreaterThanOrEqual(300);
  expect(took).toBeLessThan(3_000);
  const grandchild = Number(await Bun.file(pidFile).text());
  await waitFor(() => (isAlive(grandchild) ? undefined : true), "the grandchild to be gone", 2_000);
});

test("after a normal exit, a descendant still holding the pipes is killed", async () => {
  const pidFile = `/tmp/gw-spawn-${crypto.randomUUID()}`;
  const r = await bunSpawner.run(["sh", "-c", `sh -c 'echo $$ > ${pidFile}; sleep 30' & echo started`], {
    stdin: "",
    timeoutMs: 20_000,
    env,
    pipeGraceMs: 200,
  });
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toBe("started\n");
  const grandchild = Number(await Bun.file(pidFile).text());
  await waitFor(() => (isAlive(grandchild) ? undefined : true), "the grandchild to be gone", 2_000);
});
