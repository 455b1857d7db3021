/**
 * The process-level policy of serve, receiver, mcp and demo (commands/lifecycle.ts), driven through a real
 * EventEmitter standing in for `process` and an injected monotonic clock: signals, the same signal delivered
 * twice (decideSignal, every case) versus a second signal, the stop deadline, and unhandled rejections and
 * exceptions that a connector recovers from or that end the command.
 */
import { describe, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import {
  decideSignal,
  SAME_SIGNAL_WINDOW_MS,
  type SignalState,
  superviseProcess,
} from "../../src/commands/lifecycle.ts";
import { recordingLogger } from "../helpers/logger.ts";

function world(opts: { stopMs?: number; deadlineMs?: number; recover?: boolean; windowMs?: number } = {}) {
  const events = new EventEmitter();
  const clock = { ms: 1_000 };
  const log = recordingLogger();
  const calls: string[] = [];
  let release: () => void = () => {};
  const life = superviseProcess({
    events,
    log,
    stopDeadlineMs: opts.deadlineMs ?? 5_000,
    stop: async () => {
      calls.push("stop");
      if (opts.stopMs === Number.POSITIVE_INFINITY)
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      else await Bun.sleep(opts.stopMs ?? 0);
      calls.push("stopped");
    },
    recover: (_err, origin) => {
      calls.push(`recover ${origin.package}`);
      return opts.recover === true && origin.package === "@discordjs/ws";
    },
    finish: () => calls.push("finish"),
    now: () => clock.ms,
    ...(opts.windowMs === undefined ? {} : { sameSignalWindowMs: opts.windowMs }),
  });
  /** Emits `signal` `afterMs` after the previous one. */
  const signal = (name: "SIGINT" | "SIGTERM", afterMs = 0) => {
    clock.ms += afterMs;
    events.emit(name);
  };
  return { events, log, calls, life, signal, release: () => release() };
}

const libraryError = () =>
  Object.assign(new TypeError("undefined is not an object"), {
    stack: "TypeError: x\n    at onMessage (/a/node_modules/@discordjs/ws/dist/index.js:1:1)",
  });
const ownError = () =>
  Object.assign(new Error("bug"), { stack: "Error: bug\n    at flush (/a/src/webhooks/dispatcher.ts:1:1)" });

describe("superviseProcess", () => {
  test("SIGTERM: the ordered stop, then finish, exit 0; the handlers are removed (signals a window later)", async () => {
    const w = world({ windowMs: 20 });
    w.events.emit("SIGTERM");
    expect(await w.life.done).toBe(0);
    expect(w.calls).toEqual(["stop", "stopped", "finish"]);
    expect(w.events.listenerCount("unhandledRejection")).toBe(0);
    expect(w.events.listenerCount("uncaughtException")).toBe(0);
    // Still there: a repeated delivery after a quick stop must not meet the runtime's default action.
    expect(w.events.listenerCount("SIGTERM")).toBe(1);
    w.signal("SIGTERM", 1);
    await Bun.sleep(40);
    expect(w.events.listenerCount("SIGTERM")).toBe(0);
    expect(w.events.listenerCount("SIGINT")).toBe(0);
    expect(w.calls).toEqual(["stop", "stopped", "finish"]);
  });

  test("Ctrl-C through bun run: the same SIGINT delivered twice, ms apart, is one signal, exit 0", async () => {
    const w = world({ stopMs: 30 });
    w.signal("SIGINT");
    w.signal("SIGINT", 3);
    expect(await w.life.done).toBe(0);
    expect(w.calls).toEqual(["stop", "stopped", "finish"]);
    expect(w.log.entries.some((e) => e.msg.startsWith("a second signal"))).toBe(false);
    expect(w.log.entries.find((e) => e.level === "debug")?.obj).toEqual({ signal: "SIGINT" });
  });

  test("repeats within the window of the first all count as it; one past the window ends at once", async () => {
    const w = world({ stopMs: Number.POSITIVE_INFINITY });
    w.signal("SIGINT");
    w.signal("SIGINT", 1);
    w.signal("SIGINT", SAME_SIGNAL_WINDOW_MS - 2);
    expect(w.calls).toEqual(["stop"]);
    w.signal("SIGINT", 1); // the window counts from the first, not from the latest repeat
    expect(await w.life.done).toBe(1);
    expect(w.calls).toEqual(["stop", "finish"]);
    w.release();
  });

  test("a deliberate second Ctrl-C, a second later, ends at once, exit 1", async () => {
    const w = world({ stopMs: Number.POSITIVE_INFINITY });
    w.signal("SIGINT");
    w.signal("SIGINT", 1_000);
    expect(await w.life.done).toBe(1);
    expect(w.calls).toEqual(["stop", "finish"]);
    expect(w.log.entries.find((e) => e.level === "warn")?.obj).toEqual({ signal: "SIGINT" });
    w.release();
  });

  test("a signal while a stop started by something else runs ends at once", async () => {
    const w = world({ stopMs: Number.POSITIVE_INFINITY });
    w.life.stop("stdin ended");
    w.signal("SIGINT");
    expect(await w.life.done).toBe(1);
    w.release();
  });

  test("a second signal while the stop runs ends at once, exit 1, finish still runs", async () => {
    const w = world({ stopMs: Number.POSITIVE_INFINITY });
    w.signal("SIGINT");
    w.signal("SIGTERM"); // another kind: never a repeat, however soon
    expect(await w.life.done).toBe(1);
    expect(w.calls).toEqual(["stop", "finish"]);
    expect(w.log.entries.some((e) => e.msg.startsWith("a second signal"))).toBe(true);
    w.release();
  });

  test("a stop past its deadline ends the command anyway, exit 1", async () => {
    const w = world({ stopMs: Number.POSITIVE_INFINITY, deadlineMs: 50 });
    const t0 = performance.now();
    w.life.stop("test");
    expect(await w.life.done).toBe(1);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    expect(w.calls).toEqual(["stop", "finish"]);
    expect(w.log.entries.find((e) => e.level === "error")?.obj).toMatchObject({ deadline_ms: 50 });
    w.release();
  });

  test("a stop that throws still ends, exit 1", async () => {
    const events = new EventEmitter();
    const life = superviseProcess({
      events,
      log: recordingLogger(),
      stopDeadlineMs: 1000,
      stop: async () => {
        throw new Error("close failed");
      },
    });
    events.emit("SIGTERM");
    expect(await life.done).toBe(1);
  });

  test("an unhandled rejection from a platform library is recovered: no stop", async () => {
    const w = world({ recover: true });
    w.events.emit("unhandledRejection", libraryError(), Promise.resolve());
    w.events.emit("uncaughtException", libraryError());
    expect(w.calls).toEqual(["recover @discordjs/ws", "recover @discordjs/ws"]);
    const warned = w.log.entries.filter((e) => e.level === "warn");
    expect(warned.map((e) => (e.obj as { component: string }).component)).toEqual([
      "@discordjs/ws",
      "@discordjs/ws",
    ]);
    w.events.emit("SIGTERM");
    expect(await w.life.done).toBe(0);
  });

  test("anything else is logged with its component and ends in the ordered stop, exit 1", async () => {
    const w = world({ recover: true });
    w.events.emit("unhandledRejection", ownError(), Promise.resolve());
    expect(await w.life.done).toBe(1);
    expect(w.calls).toEqual(["recover null", "stop", "stopped", "finish"]);
    const error = w.log.entries.find((e) => e.level === "error");
    expect(error?.msg).toBe("unhandled rejection: stopping");
    expect(error?.obj).toMatchObject({
      component: "webhooks",
      frame: "at flush (/a/src/webhooks/dispatcher.ts:1:1)",
    });
  });

  test("an uncaught exception nobody owns, and a library fault without a recoverer, stop too", async () => {
    const w = world({ recover: false });
    w.events.emit("uncaughtException", libraryError());
    expect(await w.life.done).toBe(1);
    expect(w.log.entries.find((e) => e.level === "error")?.msg).toBe("uncaught exception: stopping");
  });

  test("a fault while stopping is logged; it does not cut the stop short", async () => {
    const w = world({ stopMs: 30 });
    w.events.emit("SIGTERM");
    w.events.emit("unhandledRejection", ownError(), Promise.resolve());
    expect(await w.life.done).toBe(0);
    expect(w.calls).toEqual(["stop", "stopped", "finish"]);
  });
});

describe("decideSignal", () => {
  const W = SAME_SIGNAL_WINDOW_MS;
  const at = (phase: SignalState["phase"], first: SignalState["first"] = null): SignalState => ({
    phase,
    first,
  });
  const sigint = { signal: "SIGINT" as const, atMs: 10_000 };

  test("the window has margin over the measured gap (0.01-7 ms) and stays under a person's double press", () => {
    expect(W).toBeGreaterThanOrEqual(100);
    expect(W).toBeLessThanOrEqual(1_000);
  });

  test.each([
    ["running: any signal starts the stop", at("running"), "SIGINT", 0, "stop"],
    ["running: SIGTERM too", at("running"), "SIGTERM", 0, "stop"],
    ["running: a stale first is irrelevant", at("running", sigint), "SIGINT", 10_001, "stop"],
    ["stopping: same signal at once", at("stopping", sigint), "SIGINT", 10_000, "repeat"],
    ["stopping: same signal 7 ms later", at("stopping", sigint), "SIGINT", 10_007, "repeat"],
    ["stopping: same signal just inside", at("stopping", sigint), "SIGINT", 10_000 + W - 1, "repeat"],
    ["stopping: same signal at the window's end", at("stopping", sigint), "SIGINT", 10_000 + W, "exit-now"],
    ["stopping: same signal a second later", at("stopping", sigint), "SIGINT", 11_000, "exit-now"],
    ["stopping: a clock that went back", at("stopping", sigint), "SIGINT", 9_000, "repeat"],
    ["stopping: another kind at once", at("stopping", sigint), "SIGTERM", 10_000, "exit-now"],
    ["stopping: another kind later", at("stopping", sigint), "SIGTERM", 11_000, "exit-now"],
    ["stopping, started by a fault: SIGINT", at("stopping"), "SIGINT", 0, "exit-now"],
    ["stopping, started by a fault: SIGTERM", at("stopping"), "SIGTERM", 0, "exit-now"],
    ["ended: same signal", at("ended", sigint), "SIGINT", 10_001, "ignore"],
    ["ended: another kind", at("ended", sigint), "SIGTERM", 99_999, "ignore"],
    ["ended, no first", at("ended"), "SIGINT", 0, "ignore"],
  ] as const)("%s", (_name, state, signal, atMs, action) => {
    expect(decideSignal(state, signal, atMs)).toBe(action);
  });

  test("the window is a parameter", () => {
    expect(decideSignal(at("stopping", sigint), "SIGINT", 10_050, 100)).toBe("repeat");
    expect(decideSignal(at("stopping", sigint), "SIGINT", 10_100, 100)).toBe("exit-now");
    expect(decideSignal(at("stopping", sigint), "SIGINT", 10_000, 0)).toBe("exit-now");
  });
});
