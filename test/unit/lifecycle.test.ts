/**
 * The process-level policy of serve, receiver and mcp (commands/lifecycle.ts), driven through a real
 * EventEmitter standing in for `process`: signals, a second signal, the stop deadline, and unhandled
 * rejections and exceptions that a connector recovers from or that end the command.
 */
import { describe, expect, test } from "bun:test";
import { EventEmitter } from "node:events";
import { superviseProcess } from "../../src/commands/lifecycle.ts";
import { recordingLogger } from "../helpers/logger.ts";

function world(opts: { stopMs?: number; deadlineMs?: number; recover?: boolean } = {}) {
  const events = new EventEmitter();
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
  });
  return { events, log, calls, life, release: () => release() };
}

const libraryError = () =>
  Object.assign(new TypeError("undefined is not an object"), {
    stack: "TypeError: x\n    at onMessage (/a/node_modules/@discordjs/ws/dist/index.js:1:1)",
  });
const ownError = () =>
  Object.assign(new Error("bug"), { stack: "Error: bug\n    at flush (/a/src/webhooks/dispatcher.ts:1:1)" });

describe("superviseProcess", () => {
  test("SIGTERM: the ordered stop, then finish, exit 0; the handlers are removed", async () => {
    const w = world();
    w.events.emit("SIGTERM");
    expect(await w.life.done).toBe(0);
    expect(w.calls).toEqual(["stop", "stopped", "finish"]);
    expect(w.events.listenerCount("SIGTERM")).toBe(0);
    expect(w.events.listenerCount("unhandledRejection")).toBe(0);
  });

  test("a second signal while the stop runs ends at once, exit 1, finish still runs", async () => {
    const w = world({ stopMs: Number.POSITIVE_INFINITY });
    w.events.emit("SIGINT");
    w.events.emit("SIGTERM");
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
