/**
 * Reading the service managers' answers (launchctl print, systemctl show), the /healthz address, the
 * service paths, and the status verdict: ok only when installed, running and answering.
 */
import { describe, expect, test } from "bun:test";
import { healthUrl } from "../../src/service-manager/health-probe.ts";
import { parseLaunchctlPrint } from "../../src/service-manager/launchctl-print.ts";
import type { StatusReport } from "../../src/service-manager/status-report.ts";
import { statusJson, statusOk, statusText, verdict } from "../../src/service-manager/status-report.ts";
import { parseSystemctlShow } from "../../src/service-manager/systemd.ts";
import { serviceTarget } from "../../src/service-manager/target.ts";
import {
  launchctlPrintRunning,
  launchctlPrintStopped,
  launchdRunningStatus,
} from "../helpers/service-manager-fakes.ts";

describe("launchctl print", () => {
  test("a running job: state, pid, last exit, program; nested state lines are not the job's", () => {
    expect(parseLaunchctlPrint(launchctlPrintRunning("/Users/ann", 501, 4242, "/usr/local/bin/gw"))).toEqual({
      state: "running",
      pid: 4242,
      lastExitCode: null,
      lastExit: "(never exited)",
      program: "/usr/local/bin/gw",
    });
  });

  test("a stopped job with a named exit code", () => {
    expect(parseLaunchctlPrint(launchctlPrintStopped(501, "/usr/local/bin/gw"))).toEqual({
      state: "not running",
      pid: null,
      lastExitCode: 78,
      lastExit: "78: EX_CONFIG",
      program: "/usr/local/bin/gw",
    });
  });

  test("a nested block before the job's own lines does not count", () => {
    const text =
      "gui/501/dev.gw.serve = {\n\tendpoints = {\n\t\tstate = active\n\t\tpid = 1\n\t}\n\tstate = waiting\n}\n";
    expect(parseLaunchctlPrint(text)).toMatchObject({ state: "waiting", pid: null });
  });
});

describe("systemctl show", () => {
  test("active with a main pid, in any order", () => {
    expect(
      parseSystemctlShow("MainPID=777\nExecMainStatus=0\nActiveState=active\nLoadState=loaded\n"),
    ).toEqual({ loadState: "loaded", activeState: "active", mainPid: 777, execMainStatus: 0 });
  });
  test("an unknown unit: not-found, no pid", () => {
    expect(
      parseSystemctlShow("LoadState=not-found\nActiveState=inactive\nMainPID=0\nExecMainStatus=0\n"),
    ).toEqual({
      loadState: "not-found",
      activeState: "inactive",
      mainPid: null,
      execMainStatus: 0,
    });
  });
});

test("the health URL asks loopback for a wildcard bind and brackets IPv6", () => {
  expect(healthUrl("127.0.0.1", 8080)).toBe("http://127.0.0.1:8080/healthz");
  expect(healthUrl("0.0.0.0", 9)).toBe("http://127.0.0.1:9/healthz");
  expect(healthUrl("::", 9)).toBe("http://[::1]:9/healthz");
  expect(healthUrl("fe80::1", 9)).toBe("http://[fe80::1]:9/healthz");
  expect(healthUrl("gw.local", 9)).toBe("http://gw.local:9/healthz");
});

test("service paths per manager", () => {
  const mac = { platform: "darwin" as const, homeDir: "/Users/ann", cwd: "/" };
  expect(serviceTarget("launchd", {}, mac, 501)).toEqual({
    manager: "launchd",
    name: "dev.gw.serve",
    definitionPath: "/Users/ann/Library/LaunchAgents/dev.gw.serve.plist",
    envFilePath: "/Users/ann/.config/gw/env",
    configDir: "/Users/ann/.config/gw",
    homeDir: "/Users/ann",
    domain: "gui/501",
    serviceRef: "gui/501/dev.gw.serve",
    enableLink: null,
  });
  const linux = { platform: "linux" as const, homeDir: "/home/ann", cwd: "/" };
  expect(serviceTarget("systemd", { XDG_CONFIG_HOME: "/cfg" }, linux, 1000)).toMatchObject({
    definitionPath: "/cfg/systemd/user/gw.service",
    envFilePath: "/cfg/gw/env",
    serviceRef: "gw",
    enableLink: "/cfg/systemd/user/default.target.wants/gw.service",
  });
});

describe("the verdict", () => {
  const good: StatusReport = {
    service: launchdRunningStatus("/Users/ann"),
    health: {
      url: "http://127.0.0.1:8080/healthz",
      answered: true,
      httpStatus: 200,
      status: "ok",
      version: "0.1.0",
      connectors: { device_messenger: "ok" },
      details: { device_messenger: "Up to date with chat.db." },
      deadWebhooks: 0,
      error: null,
    },
    envFilePath: "/Users/ann/.config/gw/env",
    envFileExists: true,
    logs: { out: "/L/launchd.out.log", err: "/L/launchd.err.log" },
  };
  const with_ = (
    service: Partial<StatusReport["service"]>,
    health: Partial<StatusReport["health"]> = {},
  ) => ({
    ...good,
    service: { ...good.service, ...service },
    health: { ...good.health, ...health },
  });

  test("ok only when installed, running and answering", () => {
    expect(statusOk(good)).toBe(true);
    expect(verdict(good)).toBe("ok: installed, running and answering on http://127.0.0.1:8080/healthz");
    expect(statusText(good)).toContain("  running     yes (pid 4242)\n");
    expect(statusText(good)).toContain("HTTP 200, status ok, gw 0.1.0 (device_messenger ok)");
    expect(statusJson(good)).toMatchObject({ ok: true, pid: 4242, health: { ok: true, http_status: 200 } });
  });

  test("each way of not being ok says what to do", () => {
    const cases: [StatusReport, RegExp][] = [
      [
        with_({ installed: false, loaded: false, running: false }),
        /not installed\. Run `gw service install`/,
      ],
      [with_({ loaded: false, running: false }), /installed but not loaded\. Run `gw service install`/],
      [
        with_({ running: false, pid: null, lastExit: "78: EX_CONFIG" }),
        /not running \(last exit 78: EX_CONFIG\); see \/L\/launchd\.err\.log/,
      ],
      [
        with_({}, { answered: false, httpStatus: null, error: "Unable to connect" }),
        /running, but .*Unable to connect/,
      ],
      [with_({}, { httpStatus: 404 }), /does not answer as gw \(HTTP 404\)/],
      [
        with_({ problem: "launchctl was not found on PATH" }),
        /cannot read the service state: launchctl was not found/,
      ],
    ];
    for (const [report, line] of cases) {
      expect(statusOk(report)).toBe(false);
      expect(verdict(report)).toMatch(/^FIX: /);
      expect(verdict(report)).toMatch(line);
    }
  });
});
