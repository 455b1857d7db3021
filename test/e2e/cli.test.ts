/** The gw entry from source: commands, help, version and exit codes (0 / 1 / 2) as decisions.md fixes them. */
import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { freePort, isolatedEnv, spawnGw, waitForHealth } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

async function run(args: string[], env: Record<string, string>) {
  const gw = spawnGw(args, env);
  const code = await gw.exited;
  return { code, ...gw.output() };
}

describe("gw", () => {
  test("--version prints the package version", async () => {
    const r = await run(["--version"], {});
    expect(r).toMatchObject({ code: 0, stdout: `gw ${pkg.version}\n` });
  });

  test("--help lists every command; a command's --help describes it", async () => {
    const r = await run(["--help"], {});
    expect(r.code).toBe(0);
    for (const c of ["serve", "receiver", "mcp", "doctor", "demo"]) expect(r.stdout).toContain(`  ${c}`);
    const s = await run(["serve", "--help"], {});
    expect(s.code).toBe(0);
    expect(s.stdout).toContain("GW_BEARER_TOKEN");
  });

  test("an unknown command exits 1 with the help on stderr", async () => {
    const r = await run(["serev"], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unknown command "serev"');
  });
});

describe("gw serve configuration errors exit 2 before anything starts", () => {
  test("missing GW_BEARER_TOKEN names the variable and creates nothing", async () => {
    const dir = tempDir();
    const { GW_BEARER_TOKEN: _, ...env } = isolatedEnv(dir);
    const r = await run(["serve"], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("configuration error: GW_BEARER_TOKEN is not set");
    expect(existsSync(join(dir, "data"))).toBe(false);
    expect(existsSync(join(dir, "logs"))).toBe(false);
  });

  test("a bad value names the variable, the value and the fix", async () => {
    const r = await run(["serve"], isolatedEnv(tempDir(), { GW_BIND_PORT: "abc" }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('configuration error: GW_BIND_PORT="abc" is not a port number. Fix:');
  });

  test("an invalid allowlist names the file and the entry", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "allowlist.toml"),
      '[[entry]]\nsource = "device_messenger"\nid = "+15555550100"\n',
    );
    const r = await run(["serve"], isolatedEnv(dir, { GW_BIND_PORT: String(freePort()) }));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("GW_ALLOWLIST_PATH");
    expect(r.stderr).toContain('entry 1: field "person_id" must be a non-empty string');
  });
});

describe("gw serve", () => {
  test("a second instance on the same port fails with exit 1 instead of sharing it", async () => {
    const port = freePort();
    const first = spawnGw(["serve"], isolatedEnv(tempDir(), { GW_BIND_PORT: String(port) }));
    try {
      await waitForHealth(port);
      const second = await run(["serve"], isolatedEnv(tempDir(), { GW_BIND_PORT: String(port) }));
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${port}`);
    } finally {
      first.proc.kill("SIGTERM");
      expect(await first.exited).toBe(0);
    }
  });
});
