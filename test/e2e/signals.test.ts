/**
 * Ctrl-C as a terminal sends it: SIGINT to the whole process group of `bun run demo`, `bun run start` and
 * `gw serve`, so gw gets it from the terminal and, through `bun run`, once more forwarded (lifecycle.ts:
 * the same signal within SAME_SIGNAL_WINDOW_MS is one). Twenty fresh processes each, every one exit 0; and a
 * deliberate second SIGINT a second later, while a half-sent request holds the stop, still ends at once,
 * exit 1. Linux: a process is ready once gw in it catches SIGINT (/proc/<pid>/status, SigCgt).
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import type { Subprocess } from "bun";
import { freePort, isolatedEnv, ROOT, waitFor, waitForHealth } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const RUNS = 20;
/** Fresh processes started at a time (each starts in ~0.3 s here; four keep the file well under 30 s). */
const PARALLEL = 4;
/** A clean stop of these ends within this (the demo's takes ~50 ms); past it the run counts as hung. */
const EXIT_TIMEOUT_MS = 15_000;

const COMMANDS = {
  "bun run demo": ["bun", "run", "demo"],
  "bun run start": ["bun", "run", "start"],
  "gw serve": [process.execPath, "src/main.ts", "serve"],
} as const;
type Command = keyof typeof COMMANDS;

interface Group {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  token: string;
  output(): string;
  /** The exit code, or "hung" past EXIT_TIMEOUT_MS. */
  exited(): Promise<number | "hung">;
  sigint(): void;
  /** SIGKILL to whatever of the group is left. */
  clear(): void;
}

const readOr = (path: string) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
};

/** `pid` and every process below it. */
function tree(pid: number): number[] {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children = tasks.flatMap((t) => readOr(`/proc/${pid}/task/${t}/children`).split(" ").filter(Boolean));
  return [pid, ...children.flatMap((c) => tree(Number(c)))];
}

/** The gw process (src/main.ts) in the tree led by `leader`, once it handles SIGINT (bit 1 of SigCgt). */
function gwCatchingSigint(leader: number): number | undefined {
  return tree(leader).find((pid) => {
    if (!readOr(`/proc/${pid}/cmdline`).includes("src/main.ts")) return false;
    const mask = /SigCgt:\s*([0-9a-f]+)/.exec(readOr(`/proc/${pid}/status`))?.[1];
    return mask !== undefined && (BigInt(`0x${mask}`) & 2n) !== 0n;
  });
}

/** `command` leading its own process group, as a terminal's foreground job is, listening and handling SIGINT. */
async function startGroupOnce(command: Command): Promise<Group> {
  const port = freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    ...isolatedEnv(tempDir(), { GW_BIND_PORT: String(port) }),
  };
  const proc = Bun.spawn([...COMMANDS[command]], {
    cwd: ROOT,
    env,
    detached: true,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) out += decoder.decode(chunk, { stream: true });
  };
  const drained = Promise.all([pump(proc.stdout), pump(proc.stderr)]);
  const group: Group = {
    proc,
    port,
    token: env.GW_BEARER_TOKEN as string,
    output: () => out,
    exited: async () => {
      const code = await Promise.race([proc.exited, Bun.sleep(EXIT_TIMEOUT_MS).then(() => "hung" as const)]);
      if (code !== "hung") await drained;
      return code;
    },
    sigint: () => process.kill(-proc.pid, "SIGINT"),
    clear: () => {
      try {
        process.kill(-proc.pid, "SIGKILL");
      } catch {
        // The whole group has ended.
      }
    },
  };
  try {
    await Promise.race([
      (async () => {
        await waitForHealth(port);
        await waitFor(() => gwCatchingSigint(proc.pid), `${command} handling SIGINT`);
      })(),
      proc.exited.then((code): never => {
        throw new Error(`${command} exited with ${code} before it was ready: ${out.slice(-2000)}`);
      }),
    ]);
  } catch (err) {
    group.clear();
    throw err;
  }
  return group;
}

/**
 * startGroupOnce, again on another port when the one freePort gave was taken meanwhile (runs in parallel
 * bind ports of their own: the demo's fake Discord and receiver, clients), which is not what is under test.
 */
async function startGroup(command: Command, attempts = 3): Promise<Group> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startGroupOnce(command);
    } catch (err) {
      if (attempt >= attempts || !String(err).includes("cannot listen")) throw err;
    }
  }
}

/** One Ctrl-C to a fresh `command`: its exit code, with the end of its output when that is not 0. */
async function ctrlC(command: Command): Promise<string> {
  const group = await startGroup(command);
  try {
    group.sigint();
    const code = await group.exited();
    if (code === 0 && command === "bun run demo" && !group.output().includes("gw demo stopped"))
      return `0 without the demo's goodbye: ${group.output().slice(-600)}`;
    return code === 0 ? "0" : `exit ${code}: ${group.output().slice(-600)}`;
  } finally {
    group.clear();
  }
}

/** `n` runs of `run`, `parallel` at a time, in the order they started. */
async function pool<T>(n: number, parallel: number, run: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let started = 0;
  const worker = async () => {
    for (let slot = started++; slot < n; slot = started++) results[slot] = await run();
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return results;
}

test.each(Object.keys(COMMANDS) as Command[])(
  "%s: a Ctrl-C to the process group is one signal: exit 0, twenty times",
  async (command) => {
    const codes = await pool(RUNS, PARALLEL, () => ctrlC(command));
    expect(codes.filter((c) => c !== "0")).toEqual([]);
    expect(codes).toHaveLength(RUNS);
  },
  60_000,
);

test.each(["bun run demo", "bun run start"] as Command[])(
  "%s: a second Ctrl-C a second later, while the stop is held, ends at once, exit 1",
  async (command) => {
    const group = await startGroup(command);
    // The demo makes its own token and prints it; gw serve has the environment's.
    const token =
      command === "bun run demo"
        ? await waitFor(() => /export GW_BEARER_TOKEN=([0-9a-f]+)/.exec(group.output())?.[1], "the banner")
        : group.token;
    // A request whose body never finishes: the server's stop waits for it, so the ordered stop is held.
    const held = await Bun.connect({ hostname: "127.0.0.1", port: group.port, socket: { data() {} } });
    try {
      held.write(
        "POST /messages/send HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          `Authorization: Bearer ${token}\r\nContent-Length: 100\r\n\r\n{"to`,
      );
      await Bun.sleep(100);
      group.sigint();
      await Bun.sleep(1_000);
      expect(group.proc.exitCode).toBeNull(); // the first Ctrl-C, delivered twice, is still one stop
      const t0 = performance.now();
      group.sigint();
      expect(await group.exited()).toBe(1);
      expect(performance.now() - t0).toBeLessThan(1_500);
      expect(group.output()).toContain("a second signal: exiting now");
    } finally {
      held.end();
      group.clear();
    }
  },
  20_000,
);
