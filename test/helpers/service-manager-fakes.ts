/**
 * Stand-ins for launchctl and systemctl: shell scripts in a temp dir meant to go first on PATH. Each
 * records its argv (one call per line, arguments tab-separated) to calls.log. The launchctl keeps its
 * loaded state in a file: `print` answers print.txt when loaded and exits 113 "Could not find service"
 * otherwise, `bootstrap` copies the plist it was given and fails (5) when already loaded, as launchd
 * does, and `bootout` unloads (113 when not loaded). The systemctl answers `--user show` with show.txt.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./temp.ts";

const LOG_ARGV = `d=$(dirname "$0")
{ for a in "$@"; do printf '%s\\t' "$a"; done; printf '\\n'; } >> "$d/calls.log"
`;

const LAUNCHCTL = `#!/bin/sh
${LOG_ARGV}case "$1" in
  print)
    if [ -f "$d/loaded" ]; then cat "$d/print.txt"; exit 0; fi
    echo "Could not find service \\"dev.gw.serve\\" in domain for user gui: $(id -u)" >&2
    exit 113;;
  bootstrap)
    if [ -f "$d/loaded" ]; then echo "Bootstrap failed: 5: Input/output error" >&2; exit 5; fi
    cp "$3" "$d/bootstrapped.plist" && touch "$d/loaded"; exit $?;;
  bootout)
    if [ -f "$d/loaded" ]; then rm "$d/loaded"; exit 0; fi
    echo "Boot-out failed: 113: Could not find specified service" >&2
    exit 113;;
  *) echo "Unrecognized subcommand: $1" >&2; exit 64;;
esac
`;

const SYSTEMCTL = `#!/bin/sh
${LOG_ARGV}if [ "$1" = "--user" ] && [ "$2" = "show" ]; then cat "$d/show.txt"; exit 0; fi
echo "fake systemctl: unexpected call: $*" >&2
exit 1
`;

/** The service status gw reads from launchctlPrintRunning(home, …, 4242, "/usr/local/bin/gw"). */
export function launchdRunningStatus(home: string) {
  return {
    manager: "launchd",
    name: "dev.gw.serve",
    definitionPath: `${home}/Library/LaunchAgents/dev.gw.serve.plist`,
    installed: true,
    loaded: true,
    running: true,
    pid: 4242,
    lastExitCode: null,
    lastExit: "(never exited)",
    program: "/usr/local/bin/gw",
    problem: null,
  } as const;
}

/** What `launchctl print gui/<uid>/dev.gw.serve` says about a running job (shape of macOS 14's output). */
export function launchctlPrintRunning(home: string, uid: number, pid: number, program: string): string {
  return `gui/${uid}/dev.gw.serve = {
\tactive count = 1
\tpath = ${home}/Library/LaunchAgents/dev.gw.serve.plist
\ttype = LaunchAgent
\tstate = running

\tprogram = ${program}
\targuments = {
\t\t${program}
\t\tserve
\t}

\tworking directory = ${home}

\tstdout path = ${home}/Library/Logs/gw/launchd.out.log
\tstderr path = ${home}/Library/Logs/gw/launchd.err.log
\tdefault environment = {
\t\tPATH => /usr/bin:/bin:/usr/sbin:/sbin
\t}

\tdomain = gui/${uid} [100005]
\tasid = 100005
\tminimum runtime = 10
\texit timeout = 5
\truns = 1
\tpid = ${pid}
\timmediate reason = speculative
\tforks = 0
\texecs = 1
\tinitialized = 1
\ttrampolined = 1
\tstarted suspended = 0
\tproxy started suspended = 0
\tlast exit code = (never exited)

\tevent triggers = {
\t\tdev.gw.serve.keepalive = {
\t\t\tstate = 0
\t\t}
\t}

\tspawn type = interactive (4)
\tjetsam priority = 40
\tproperties = keepalive | runatload | inferred program
}
`;
}

/** A job launchd keeps but that is not running: it exited 78 and waits for its throttle. */
export function launchctlPrintStopped(uid: number, program: string): string {
  return `gui/${uid}/dev.gw.serve = {
\tactive count = 0
\ttype = LaunchAgent
\tstate = not running

\tprogram = ${program}
\truns = 4
\tlast exit code = 78: EX_CONFIG
\tspawn type = interactive (4)
}
`;
}

export interface FakeTools {
  dir: string;
  /** The recorded calls, each as its argv without the program name. */
  calls(): string[][];
  /** PATH with the fakes first. */
  path: string;
}

function fakeTools(name: string, script: string): FakeTools {
  const dir = tempDir("gw-fake-tools-");
  const file = join(dir, name);
  writeFileSync(file, script);
  chmodSync(file, 0o755);
  return {
    dir,
    path: `${dir}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    calls: () => {
      const log = join(dir, "calls.log");
      if (!existsSync(log)) return [];
      return readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split("\t").slice(0, -1));
    },
  };
}

export interface FakeLaunchctl extends FakeTools {
  /** Sets what `print` answers while the job is loaded. */
  setPrint(text: string): void;
  isLoaded(): boolean;
  /** The plist file as it was when `bootstrap` ran. */
  bootstrapped(): string;
}

export function fakeLaunchctl(): FakeLaunchctl {
  const tools = fakeTools("launchctl", LAUNCHCTL);
  return {
    ...tools,
    setPrint: (text) => writeFileSync(join(tools.dir, "print.txt"), text),
    isLoaded: () => existsSync(join(tools.dir, "loaded")),
    bootstrapped: () => readFileSync(join(tools.dir, "bootstrapped.plist"), "utf8"),
  };
}

export interface FakeSystemctl extends FakeTools {
  setShow(props: Record<string, string | number>): void;
}

export function fakeSystemctl(): FakeSystemctl {
  const tools = fakeTools("systemctl", SYSTEMCTL);
  return {
    ...tools,
    setShow: (props) =>
      writeFileSync(
        join(tools.dir, "show.txt"),
        Object.entries(props)
          .map(([k, v]) => `${k}=${v}\n`)
          .join(""),
      ),
  };
}

/** A stand-in gw /healthz on a free loopback port. */
export function fakeHealthz(body: Record<string, unknown> = {}): { port: number; stop(): void } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === "/healthz"
        ? Response.json({
            status: "ok",
            version: "0.1.0",
            uptime_s: 3,
            connectors: {
              device_messenger: { state: "ok", detail: "reading chat.db" },
              community_chat: { state: "disabled", detail: "no bot token" },
            },
            webhooks: { queue_depth: 0, dead: 0 },
            ...body,
          })
        : new Response("not found", { status: 404 }),
  });
  return { port: server.port as number, stop: () => server.stop(true) };
}
