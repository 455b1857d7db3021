/**
 * `gw service install → status → uninstall` through the command itself, with real files in a temp HOME
 * and stand-in launchctl/systemctl programs first on PATH (real processes recording their argv): the
 * exact argv sequences, the files written and removed, the env file kept and never overwritten, status
 * lines, JSON and exit codes, including a /healthz that answers.
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { type CommandContext, CommandError } from "../../src/commands/exit.ts";
import { selfCommand } from "../../src/commands/self.ts";
import { service } from "../../src/commands/service.ts";
import { bunSpawner } from "../../src/core/spawn.ts";
import { getServiceStatus } from "../../src/service-manager/status.ts";
import { parsePlist } from "../helpers/plist.ts";
import { freePort } from "../helpers/process.ts";
import {
  fakeHealthz,
  fakeLaunchctl,
  fakeSystemctl,
  launchctlPrintRunning,
  launchctlPrintStopped,
  launchdRunningStatus,
} from "../helpers/service-manager-fakes.ts";
import { tempDir } from "../helpers/temp.ts";

const UID = process.getuid?.() ?? 0;
const stops: (() => void)[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

async function gw(
  argv: string[],
  opts: { home: string; path: string; platform: NodeJS.Platform; env?: Record<string, string> },
) {
  let stdout = "";
  let stderr = "";
  const ctx: CommandContext = {
    argv,
    env: { PATH: opts.path, HOME: opts.home, ...opts.env },
    platform: opts.platform,
    homeDir: opts.home,
    cwd: opts.home,
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
  };
  let code: number;
  try {
    code = await service(ctx);
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    stderr += `${err.message}\n`;
    code = err.exitCode;
  }
  return { code, stdout, stderr };
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe("launchd", () => {
  test("install → status → reinstall → uninstall, with the exact launchctl calls", async () => {
    const home = tempDir();
    const launchctl = fakeLaunchctl();
    const self = selfCommand();
    launchctl.setPrint(launchctlPrintRunning(home, UID, 4242, self[0] as string));
    const opts = { home, path: launchctl.path, platform: "darwin" as const };
    const ref = `gui/${UID}/dev.gw.serve`;
    const plistPath = join(home, "Library/LaunchAgents/dev.gw.serve.plist");
    const envPath = join(home, ".config/gw/env");

    // Nothing installed yet.
    const before = await gw(["status"], opts);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain("FIX: not installed. Run `gw service install`.");
    expect(launchctl.calls()).toEqual([["print", ref]]);

    // Install: a new env file, the plist, then bootstrap.
    const install = await gw(["install"], opts);
    expect(install.stderr).toBe("");
    expect(install.code).toBe(0);
    expect(launchctl.calls().slice(1)).toEqual([
      ["print", ref],
      ["bootstrap", `gui/${UID}`, plistPath],
    ]);
    expect(mode(envPath)).toBe(0o600);
    expect(mode(join(home, ".config/gw"))).toBe(0o700);
    const envText = readFileSync(envPath, "utf8");
    const token = /^GW_BEARER_TOKEN=([0-9a-f]{64})$/m.exec(envText)?.[1] as string;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(envText.startsWith("# gw login service environment")).toBe(true);
    expect(mode(plistPath)).toBe(0o600);
    expect(launchctl.bootstrapped()).toBe(readFileSync(plistPath, "utf8"));
    const job = parsePlist(readFileSync(plistPath, "utf8")) as Record<string, unknown>;
    expect(job).toEqual({
      Label: "dev.gw.serve",
      ProgramArguments: [...self, "serve"],
      EnvironmentVariables: { GW_LOG_STDERR_LEVEL: "error", GW_BEARER_TOKEN: token },
      WorkingDirectory: home,
      StandardOutPath: join(home, "Library/Logs/gw/launchd.out.log"),
      StandardErrorPath: join(home, "Library/Logs/gw/launchd.err.log"),
      RunAtLoad: true,
      KeepAlive: true,
      ProcessType: "Interactive",
    });
    expect(mode(join(home, "Library/Logs/gw"))).toBe(0o700);
    expect(install.stdout).toContain(`  env file  ${envPath} (created, 0600, with a new GW_BEARER_TOKEN)`);
    expect(install.stdout).toContain(`  plist     ${plistPath} (0600)`);
    expect(install.stdout).toContain("Full Disk Access");
    expect(install.stdout).toContain(`       ${self[0]}\n`);
    expect(install.stdout).toContain("gw doctor");
    expect(install.stdout).not.toContain(token);

    // Status: loaded and running, but nothing answers on the env file's port.
    const closed = freePort();
    writeFileSync(envPath, `${envText}GW_BIND_PORT=${closed}\n`);
    const silent = await gw(["status"], opts);
    expect(silent.code).toBe(1);
    expect(silent.stdout).toContain("  running     yes (pid 4242)\n");
    expect(silent.stdout).toContain(
      `  health      http://127.0.0.1:${closed}/healthz: no answer (connection refused: nothing listens there)\n`,
    );
    expect(silent.stdout).toMatch(/FIX: running, but .*launchd\.err\.log/);

    // Status: the port answers.
    const health = fakeHealthz();
    stops.push(health.stop);
    writeFileSync(envPath, `${envText}GW_BIND_PORT=${health.port}\n`);
    const editedEnv = readFileSync(envPath, "utf8");
    const up = await gw(["status"], opts);
    expect(up.stdout).toContain(
      `  health      http://127.0.0.1:${health.port}/healthz: HTTP 200, status ok, gw 0.1.0 (device_messenger ok, community_chat disabled)\n`,
    );
    expect(up.stdout).toContain(
      `ok: installed, running and answering on http://127.0.0.1:${health.port}/healthz`,
    );
    expect(up.code).toBe(0);
    const json = await gw(["status", "--json"], opts);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      manager: "launchd",
      name: "dev.gw.serve",
      definition_path: plistPath,
      env_file: envPath,
      installed: true,
      loaded: true,
      running: true,
      pid: 4242,
      last_exit_code: null,
      last_exit: "(never exited)",
      program: self[0],
      problem: null,
      health: { ok: true, http_status: 200, status: "ok", connectors: { device_messenger: "ok" } },
    });

    // Reinstall (after an upgrade or an edit): boot out, wait until gone, bootstrap; the env file is untouched.
    const callsBefore = launchctl.calls().length;
    const again = await gw(["install"], opts);
    expect(again.code).toBe(0);
    expect(launchctl.calls().slice(callsBefore)).toEqual([
      ["print", ref],
      ["bootout", ref],
      ["print", ref],
      ["bootstrap", `gui/${UID}`, plistPath],
    ]);
    expect(again.stdout).toContain("(kept as it is)");
    expect(again.stdout).toContain("(the loaded copy was booted out first)");
    expect(readFileSync(envPath, "utf8")).toBe(editedEnv);
    expect(
      (parsePlist(readFileSync(plistPath, "utf8")) as Record<string, unknown>).EnvironmentVariables,
    ).toEqual({
      GW_LOG_STDERR_LEVEL: "error",
      GW_BEARER_TOKEN: token,
      GW_BIND_PORT: String(health.port),
    });

    // Uninstall: bootout, plist removed, env file kept.
    const n = launchctl.calls().length;
    const removed = await gw(["uninstall"], opts);
    expect(removed.code).toBe(0);
    expect(launchctl.calls().slice(n)).toEqual([
      ["print", ref],
      ["bootout", ref],
      ["print", ref],
    ]);
    expect(existsSync(plistPath)).toBe(false);
    expect(readFileSync(envPath, "utf8")).toBe(editedEnv);
    expect(removed.stdout).toContain(`  unloaded  launchctl bootout ${ref}`);
    expect(removed.stdout).toContain(`  kept      ${envPath}`);

    // Uninstalling again is fine; status says not installed.
    const m = launchctl.calls().length;
    const twice = await gw(["uninstall"], opts);
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain("(it was not loaded)");
    expect(launchctl.calls().slice(m)).toEqual([["print", ref]]);
    const after = await gw(["status"], opts);
    expect(after.code).toBe(1);
    expect(after.stdout).toContain("FIX: not installed");
  });

  test("loaded but not running: exit 1 with the last exit code and the log to read", async () => {
    const home = tempDir();
    const launchctl = fakeLaunchctl();
    const opts = { home, path: launchctl.path, platform: "darwin" as const };
    expect((await gw(["install"], opts)).code).toBe(0);
    launchctl.setPrint(launchctlPrintStopped(UID, "/usr/local/bin/gw"));
    const r = await gw(["status"], opts);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("  running     no\n");
    expect(r.stdout).toContain("  last exit   78: EX_CONFIG\n");
    expect(r.stdout).toContain(
      `FIX: loaded but not running (last exit 78: EX_CONFIG); see ${home}/Library/Logs/gw/launchd.err.log`,
    );
  });

  test("GW_SERVICE_MANAGER=launchd on another platform; an existing env file is used as it is, hostile values included", async () => {
    const home = tempDir();
    const launchctl = fakeLaunchctl();
    const envPath = join(home, ".config/gw/env");
    mkdirSync(join(home, ".config/gw"), { recursive: true });
    const text =
      "# mine\nGW_BEARER_TOKEN=tok&<en>\"'\nGW_WEBHOOK_URL=http://127.0.0.1:1/h?a=1&b=2\nGW_WEBHOOK_SECRET=s e<c>r&t\n";
    writeFileSync(envPath, text, { mode: 0o600 });
    const r = await gw(["install"], {
      home,
      path: launchctl.path,
      platform: "linux",
      env: { GW_SERVICE_MANAGER: "launchd" },
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(readFileSync(envPath, "utf8")).toBe(text);
    const job = parsePlist(
      readFileSync(join(home, "Library/LaunchAgents/dev.gw.serve.plist"), "utf8"),
    ) as Record<string, unknown>;
    expect(job.EnvironmentVariables).toEqual({
      GW_LOG_STDERR_LEVEL: "error",
      GW_BEARER_TOKEN: "tok&<en>\"'",
      GW_WEBHOOK_URL: "http://127.0.0.1:1/h?a=1&b=2",
      GW_WEBHOOK_SECRET: "s e<c>r&t",
    });
    // The log dir is the platform's default (here Linux's) unless GW_LOG_DIR says otherwise.
    expect(job.StandardOutPath).toBe(join(home, ".local/state/gw/logs/launchd.out.log"));
  });

  test("a malformed env file: exit 2 naming file:line, nothing written, launchctl never called", async () => {
    const home = tempDir();
    const launchctl = fakeLaunchctl();
    const envPath = join(home, ".config/gw/env");
    mkdirSync(join(home, ".config/gw"), { recursive: true });
    writeFileSync(envPath, 'GW_BEARER_TOKEN=abc\nGW_BIND_PORT="9"\n', { mode: 0o600 });
    const opts = { home, path: launchctl.path, platform: "darwin" as const };
    const r = await gw(["install"], opts);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${envPath}:2: the value of GW_BIND_PORT starts with a quote`);
    expect(existsSync(join(home, "Library/LaunchAgents/dev.gw.serve.plist"))).toBe(false);
    expect(launchctl.calls()).toEqual([]);
    expect((await gw(["status"], opts)).code).toBe(2);
  });

  test("an env file without a token, or with a bad value: exit 2 naming the variable", async () => {
    const home = tempDir();
    const launchctl = fakeLaunchctl();
    mkdirSync(join(home, ".config/gw"), { recursive: true });
    writeFileSync(join(home, ".config/gw/env"), "GW_BIND_PORT=http\n", { mode: 0o600 });
    const r = await gw(["install"], { home, path: launchctl.path, platform: "darwin" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("GW_BEARER_TOKEN is not set. Fix: add a line GW_BEARER_TOKEN=");
    expect(r.stderr).toContain('GW_BIND_PORT "http" is not a port number');
    expect(launchctl.calls()).toEqual([]);
  });

  test("shell-only GW_ variables and a loose env file mode are warned about, by name only", async () => {
    const home = tempDir();
    const launchctl = fakeLaunchctl();
    mkdirSync(join(home, ".config/gw"), { recursive: true });
    writeFileSync(join(home, ".config/gw/env"), "GW_BEARER_TOKEN=file-token\n", { mode: 0o644 });
    const r = await gw(["install"], {
      home,
      path: launchctl.path,
      platform: "darwin",
      env: { GW_BEARER_TOKEN: "shell-token", GW_COMMUNITY_BOT_TOKEN: "bot-secret" },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "warning: your shell sets GW_BEARER_TOKEN, GW_COMMUNITY_BOT_TOKEN, but the service",
    );
    expect(r.stderr).toContain("is readable by others (mode 644)");
    expect(r.stderr).not.toContain("shell-token");
    expect(r.stderr).not.toContain("bot-secret");
  });

  test("launchctl missing from PATH: status reports it and exits 1", async () => {
    const home = tempDir();
    const empty = tempDir();
    const r = await gw(["status"], { home, path: empty, platform: "darwin" });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FIX: cannot read the service state: launchctl was not found on PATH");
  });
});

test("getServiceStatus (for gw doctor) reads the same state, printing nothing", async () => {
  const home = tempDir();
  const launchctl = fakeLaunchctl();
  launchctl.setPrint(launchctlPrintRunning(home, UID, 4242, "/usr/local/bin/gw"));
  const ports = {
    manager: "launchd" as const,
    env: { PATH: launchctl.path, HOME: home },
    host: { platform: "darwin" as const, homeDir: home, cwd: home },
    uid: UID,
    spawner: bunSpawner,
  };
  const none = await getServiceStatus(ports);
  expect(none).toMatchObject({ installed: false, loaded: false, running: false, pid: null, problem: null });
  expect((await gw(["install"], { home, path: launchctl.path, platform: "darwin" })).code).toBe(0);
  expect(await getServiceStatus(ports)).toEqual(launchdRunningStatus(home));
  const missing = await getServiceStatus({ ...ports, env: { PATH: tempDir(), HOME: home } });
  expect(missing.problem).toContain("launchctl was not found on PATH");
});

describe("systemd", () => {
  test("install → status → uninstall: the unit, the printed lines, one systemctl call (show)", async () => {
    const home = tempDir();
    const systemctl = fakeSystemctl();
    const self = selfCommand();
    const opts = { home, path: systemctl.path, platform: "linux" as const };
    const unitPath = join(home, ".config/systemd/user/gw.service");
    const envPath = join(home, ".config/gw/env");

    const install = await gw(["install"], opts);
    expect(install.stderr).toBe("");
    expect(install.code).toBe(0);
    expect(systemctl.calls()).toEqual([]);
    expect(mode(envPath)).toBe(0o600);
    const unit = readFileSync(unitPath, "utf8");
    expect(unit).toContain(`\nExecStart=${self.join(" ")} serve\n`);
    expect(unit).toContain(`\nEnvironmentFile=${envPath}\n`);
    expect(unit).toContain("\nRestart=always\n");
    expect(unit).toContain("\nWantedBy=default.target\n");
    expect(install.stdout).toContain(
      "  systemctl --user daemon-reload\n  systemctl --user enable --now gw\n",
    );

    // Status: active with a pid, and the port answers.
    const health = fakeHealthz();
    stops.push(health.stop);
    writeFileSync(envPath, `${readFileSync(envPath, "utf8")}GW_BIND_PORT=${health.port}\n`);
    systemctl.setShow({ LoadState: "loaded", ActiveState: "active", MainPID: 777, ExecMainStatus: 0 });
    const up = await gw(["status"], opts);
    expect(up.stdout).toContain("gw service: systemd user unit gw.service\n");
    expect(up.stdout).toContain("  running     yes (pid 777)\n");
    expect(up.code).toBe(0);
    expect(systemctl.calls()).toEqual([
      ["--user", "show", "gw", "-p", "LoadState,ActiveState,MainPID,ExecMainStatus"],
    ]);

    // Failed unit: exit 1.
    systemctl.setShow({ LoadState: "loaded", ActiveState: "failed", MainPID: 0, ExecMainStatus: 2 });
    const failed = await gw(["status", "--json"], opts);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      ok: false,
      running: false,
      pid: null,
      last_exit_code: 2,
    });

    // Uninstall: the unit and the enable link go, the env file stays, the lines to run are printed.
    mkdirSync(join(home, ".config/systemd/user/default.target.wants"));
    const link = join(home, ".config/systemd/user/default.target.wants/gw.service");
    symlinkSync(unitPath, link);
    const removed = await gw(["uninstall"], opts);
    expect(removed.code).toBe(0);
    expect(existsSync(unitPath)).toBe(false);
    expect(() => lstatSync(link)).toThrow();
    expect(existsSync(envPath)).toBe(true);
    expect(removed.stdout).toContain(
      "Now run (gw does not):\n  systemctl --user stop gw\n  systemctl --user daemon-reload\n",
    );
    expect(systemctl.calls()).toHaveLength(2);

    systemctl.setShow({ LoadState: "not-found", ActiveState: "inactive", MainPID: 0, ExecMainStatus: 0 });
    const gone = await gw(["status"], opts);
    expect(gone.code).toBe(1);
    expect(gone.stdout).toContain("FIX: not installed");
  });

  test("GW_SERVICE_MANAGER=systemd on macOS writes the unit instead", async () => {
    const home = tempDir();
    const systemctl = fakeSystemctl();
    const r = await gw(["install"], {
      home,
      path: systemctl.path,
      platform: "darwin",
      env: { GW_SERVICE_MANAGER: "systemd" },
    });
    expect(r.code).toBe(0);
    expect(existsSync(join(home, ".config/systemd/user/gw.service"))).toBe(true);
    expect(existsSync(join(home, "Library/LaunchAgents"))).toBe(false);
  });
});

describe("usage", () => {
  test("a missing or unknown subcommand, a stray flag, or a bad GW_SERVICE_MANAGER: exit 2", async () => {
    const home = tempDir();
    const opts = { home, path: "/usr/bin:/bin", platform: "linux" as const };
    for (const argv of [[], ["frob"], ["install", "--json"], ["status", "--yaml"]]) {
      const r = await gw(argv, opts);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("usage: gw service install | uninstall | status [--json]");
    }
    const bad = await gw(["status"], { ...opts, env: { GW_SERVICE_MANAGER: "upstart" } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("GW_SERVICE_MANAGER");
    expect(bad.stderr).toContain("launchd, systemd");
  });
});
