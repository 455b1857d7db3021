/**
 * A benchmark's child process speaking the line protocol of bench/lib/child-protocol.ts: JSON lines out
 * (each stamped with its arrival time here), JSON commands in, request/answer by id, clock calibration
 * with pings (offset = the child's clock minus ours, from the ping with the smallest round trip), and a
 * stop that falls back to kill. `live` holds the children still running, for cleanup on Ctrl-C.
 * `startChild` is how every benchmark starts one: spawn, wait for its ready line, calibrate. The kit's
 * own children: Messages on chat.db (MESSAGES_CHILD) and the floor of a bare Bun process (BARE_BUN).
 */
import { join } from "node:path";
import type { Subprocess } from "bun";
import type { ProcessStats } from "./child-protocol.ts";
import { now } from "./child-protocol.ts";

export const MESSAGES_CHILD = join(import.meta.dir, "messages-child.ts");
export const BARE_BUN = join(import.meta.dir, "bare-bun.ts");

export type Msg = Record<string, unknown> & { id?: number; recvAt: number };

export const live = new Set<Child>();
/** Processes started with a bare Bun.spawn (servers, gw serve, load generators) while they run. */
export const spawned = new Set<Subprocess>();

/** Counts `proc` in `spawned` until it exits, so a cleanup kills it. */
export function trackSpawned<T extends Subprocess>(proc: T): T {
  spawned.add(proc);
  void proc.exited.then(() => spawned.delete(proc));
  return proc;
}

export class Child {
  readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  readonly msgs: Msg[] = [];
  /** This child's clock minus ours, ms (set by calibrate), and its uncertainty (half the min RTT). */
  offsetMs = 0;
  offsetErrMs = Number.NaN;
  private listeners = new Set<() => void>();
  private nextId = 1;
  private stderrTail = "";
  private exitCode: number | null = null;

  constructor(
    readonly name: string,
    args: string[],
    env: Record<string, string>,
  ) {
    this.proc = Bun.spawn([process.execPath, ...args], {
      env,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    void this.pumpStdout();
    void this.pumpStderr();
    void this.proc.exited.then((code) => {
      this.exitCode = code;
      for (const l of [...this.listeners]) l();
    });
    live.add(this);
  }

  private async pumpStdout() {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of this.proc.stdout) {
      const recvAt = now();
      buf += decoder.decode(chunk, { stream: true });
      for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim() !== "") this.msgs.push({ ...(JSON.parse(line) as Record<string, unknown>), recvAt });
      }
      for (const l of [...this.listeners]) l();
    }
  }

  private async pumpStderr() {
    const decoder = new TextDecoder();
    for await (const chunk of this.proc.stderr) {
      this.stderrTail = (this.stderrTail + decoder.decode(chunk, { stream: true })).slice(-4000);
    }
  }

  waitFor(pred: (m: Msg) => boolean, timeoutMs: number, what: string): Promise<Msg> {
    return new Promise((resolve, reject) => {
      const scan = () => this.msgs.find(pred);
      const hit = scan();
      if (hit) return resolve(hit);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      const check = () => {
        const m = scan();
        if (m) {
          done();
          resolve(m);
        } else if (this.exitCode !== null) {
          done();
          reject(
            new Error(`${this.name} exited (${this.exitCode}) waiting for ${what}:\n${this.stderrTail}`),
          );
        }
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${what}:\n${this.stderrTail}`),
        );
      }, timeoutMs);
      this.listeners.add(check);
      check();
    });
  }

  send(cmd: Record<string, unknown>): number {
    const id = this.nextId++;
    this.proc.stdin.write(`${JSON.stringify({ ...cmd, id })}\n`);
    this.proc.stdin.flush();
    return id;
  }

  request(cmd: Record<string, unknown>, timeoutMs = 10_000): Promise<Msg> {
    const id = this.send(cmd);
    return this.waitFor((m) => m.id === id, timeoutMs, String(cmd.cmd));
  }

  async stats(): Promise<ProcessStats> {
    return (await this.request({ cmd: "stats" })).stats as ProcessStats;
  }

  async calibrate(pings = 25): Promise<void> {
    let best = { rtt: Number.POSITIVE_INFINITY, off: 0 };
    for (let i = 0; i < pings; i++) {
      const t1 = now();
      const r = await this.request({ cmd: "ping" });
      const rtt = r.recvAt - t1;
      if (rtt < best.rtt) best = { rtt, off: (r.t as number) - (t1 + r.recvAt) / 2 };
    }
    this.offsetMs = best.off;
    this.offsetErrMs = best.rtt / 2;
  }

  async stop(): Promise<void> {
    if (this.exitCode === null) {
      try {
        this.send({ cmd: "stop" });
      } catch {}
      let timer: ReturnType<typeof setTimeout> | undefined;
      const exited = await Promise.race([
        this.proc.exited,
        new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), 10_000);
        }),
      ]);
      clearTimeout(timer);
      if (exited === null) this.proc.kill();
      await this.proc.exited;
    }
    live.delete(this);
  }
}

/**
 * Starts a child, waits for its first `{"ready":…}` line (at most `timeoutMs`), then calibrates its clock;
 * returns it with that line.
 */
export async function startChild(
  name: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ child: Child; ready: Msg }> {
  const child = new Child(name, args, env);
  const ready = await child.waitFor((m) => "ready" in m, timeoutMs, `${name} ready`);
  await child.calibrate();
  return { child, ready };
}
