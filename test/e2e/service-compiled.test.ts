/**
 * `gw service install → status → uninstall` as users run it: the compiled dist/gw (and once from
 * source) as a real process, HOME in a temp dir, a stand-in launchctl first on PATH. A compiled gw is
 * copied to <data dir>/bin/gw and the plist runs that copy (a fixed path keeps macOS's grants across
 * upgrades); from source the plist runs bun + the absolute src/main.ts.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsePlist } from "../helpers/plist.ts";
import { BINARY, ensureBinary, ROOT, spawnGw } from "../helpers/process.ts";
import { fakeHealthz, fakeLaunchctl, launchctlPrintRunning } from "../helpers/service-manager-fakes.ts";
import { tempDir } from "../helpers/temp.ts";

const UID = process.getuid?.() ?? 0;

async function run(args: string[], env: Record<string, string>, binary: boolean) {
  const gw = spawnGw(["service", ...args], env, { binary });
  const code = await gw.exited;
  return { code, ...gw.output() };
}

async function installStatusUninstall(binary: boolean, programOf: (home: string) => string[]) {
  const home = tempDir();
  const expectedProgram = programOf(home);
  const launchctl = fakeLaunchctl();
  launchctl.setPrint(launchctlPrintRunning(home, UID, 4242, expectedProgram[0] as string));
  const env = { HOME: home, PATH: launchctl.path, GW_SERVICE_MANAGER: "launchd" };
  const ref = `gui/${UID}/dev.gw.serve`;
  const plistPath = join(home, "Library/LaunchAgents/dev.gw.serve.plist");
  const envPath = join(home, ".config/gw/env");

  const install = await run(["install"], env, binary);
  expect(install.stderr).toBe("");
  expect(install.code).toBe(0);
  const job = parsePlist(readFileSync(plistPath, "utf8")) as Record<string, unknown>;
  expect(job.ProgramArguments).toEqual([...expectedProgram, "serve"]);
  expect(install.stdout).toContain(`       ${expectedProgram[0]}\n`);

  const health = fakeHealthz();
  try {
    writeFileSync(envPath, `${readFileSync(envPath, "utf8")}GW_BIND_PORT=${health.port}\n`);
    const status = await run(["status", "--json"], env, binary);
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: true, running: true, pid: 4242 });
    expect(status.code).toBe(0);
  } finally {
    health.stop();
  }

  const uninstall = await run(["uninstall"], env, binary);
  expect(uninstall.code).toBe(0);
  expect(existsSync(plistPath)).toBe(false);
  expect(existsSync(envPath)).toBe(true);
  expect(launchctl.calls()).toEqual([
    ["print", ref],
    ["bootstrap", `gui/${UID}`, plistPath],
    ["print", ref],
    ["print", ref],
    ["bootout", ref],
    ["print", ref],
  ]);
}

describe("gw service as a process", () => {
  beforeAll(async () => {
    await ensureBinary();
  }, 120_000);

  test("dist/gw: install → status → uninstall; the plist runs a copy of the binary at a fixed path", async () => {
    const copy = (home: string) => join(home, ".local/share/gw/bin/gw");
    let home = "";
    await installStatusUninstall(true, (h) => {
      home = h;
      return [copy(h)];
    });
    expect(readFileSync(copy(home)).equals(readFileSync(realpathSync(BINARY)))).toBe(true);
    expect(statSync(copy(home)).mode & 0o777).toBe(0o755);
  });

  test("from source: the plist runs bun with the absolute src/main.ts", async () => {
    await installStatusUninstall(false, () => [process.execPath, join(ROOT, "src/main.ts")]);
  });
});
