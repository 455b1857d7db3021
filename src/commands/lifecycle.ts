/**
 * How a long-running command (serve, receiver, mcp, demo) ends: one policy for all. SIGINT/SIGTERM start the
 * ordered stop, bounded by `stopDeadlineMs` (past it the command ends anyway, exit 1: what it acknowledged is
 * already committed); a second signal ends it at once, unless it is the first one delivered twice (same kind,
 * within SAME_SIGNAL_WINDOW_MS: `decideSignal`). An unhandled rejection or exception that `recover` does not
 * take is logged with its component and ends in the ordered stop, exit 1. Only the commands touch the process.
 */
import { withDeadline } from "../core/deadline.ts";
import { type FaultOrigin, faultOrigin } from "../core/fault-origin.ts";
import type { Logger } from "../core/ports.ts";
import { EXIT_FAILURE, EXIT_OK } from "./exit.ts";

/** The process's events as the command sees them (the real `process`, or an EventEmitter in tests). */
export interface ProcessEvents {
  // biome-ignore lint/suspicious/noExplicitAny: the listeners take what each event carries
  on(event: string, listener: (...args: any[]) => void): unknown;
  // biome-ignore lint/suspicious/noExplicitAny: as above
  off(event: string, listener: (...args: any[]) => void): unknown;
}

export interface LifecycleOptions {
  events: ProcessEvents;
  log: Logger;
  /** The ordered stop (stop accepting, stop connectors, let in-flight work end, close the store). */
  stop: () => Promise<void>;
  stopDeadlineMs: number;
  /**
   * Takes a fault it can survive (true): e.g. the connector whose library raised it restarts
   * (core/fault-origin.ts).
   */
  recover?: (err: unknown, origin: FaultOrigin) => boolean;
  /** Runs last, however the command ends (the pid file). */
  finish?: () => void;
  /** Monotonic milliseconds, for telling a repeated delivery from a second signal (default performance.now). */
  now?: () => number;
  /** Tests shorten it; default SAME_SIGNAL_WINDOW_MS. */
  sameSignalWindowMs?: number;
}

export interface Lifecycle {
  /** The exit code, once the command has ended. */
  done: Promise<number>;
  /** Starts the ordered stop (nothing more while it runs; only a second signal cuts it short). */
  stop(reason: string, code?: number): void;
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/**
 * A signal of the same kind as the one that started the stop, this soon after it, is that signal delivered
 * twice, not the user's second one: Ctrl-C reaches the whole foreground process group, so a command started
 * through `bun run` (or another wrapper that forwards signals) gets it from the terminal and again from the
 * wrapper, measured 0.01–7 ms apart (most often merged into one). A deliberate second Ctrl-C comes later.
 */
export const SAME_SIGNAL_WINDOW_MS = 500;

export interface SignalState {
  phase: "running" | "stopping" | "ended";
  /** The signal that started the stop and when (`now()`), or null when something else started it. */
  first: { signal: StopSignal; atMs: number } | null;
}

/** stop: start the ordered stop; repeat: the first signal again, nothing to do; exit-now; ignore: it ended. */
export type SignalAction = "stop" | "repeat" | "exit-now" | "ignore";

/** What a SIGINT/SIGTERM received at `atMs` does. Pure. */
export function decideSignal(
  state: SignalState,
  signal: StopSignal,
  atMs: number,
  windowMs = SAME_SIGNAL_WINDOW_MS,
): SignalAction {
  if (state.phase === "ended") return "ignore";
  if (state.phase === "running") return "stop";
  const { first } = state;
  // A clock that went back (it should not: monotonic) counts as within the window.
  if (first !== null && first.signal === signal && atMs - first.atMs < windowMs) return "repeat";
  return "exit-now";
}

const describe = (err: unknown) =>
  err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);

export function superviseProcess(o: LifecycleOptions): Lifecycle {
  const { log } = o;
  const now = o.now ?? (() => performance.now());
  const windowMs = o.sameSignalWindowMs ?? SAME_SIGNAL_WINDOW_MS;
  const state: SignalState = { phase: "running", first: null };
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });

  const end = (code: number) => {
    if (state.phase === "ended") return;
    state.phase = "ended";
    o.events.off("unhandledRejection", onRejection);
    o.events.off("uncaughtException", onException);
    // The signal listeners stay a window longer: a repeated delivery landing after a quick stop is ignored,
    // whereas with no listener left the runtime's default action would end the process by that signal.
    setTimeout(() => {
      for (const s of STOP_SIGNALS) o.events.off(s, onSignal[s]);
    }, windowMs).unref();
    try {
      o.finish?.();
    } catch (err) {
      log.error({ err: describe(err) }, "clean-up at exit failed");
    }
    resolveDone(code);
  };

  const stop = (reason: string, code = EXIT_OK) => {
    if (state.phase !== "running") return;
    state.phase = "stopping";
    log.info({ reason }, "stopping");
    const ordered = o.stop().then(
      () => "stopped" as const,
      (err) => {
        log.error({ err: describe(err) }, "the ordered stop failed");
        return "failed" as const;
      },
    );
    void withDeadline(ordered, o.stopDeadlineMs, () => "late" as const).then((how) => {
      if (how === "late")
        log.error(
          { deadline_ms: o.stopDeadlineMs },
          "the ordered stop did not finish in time; exiting without it (everything acknowledged is already stored)",
        );
      else if (how === "stopped") log.info({}, "stopped");
      end(how === "stopped" ? code : EXIT_FAILURE);
    });
  };

  const fault = (kind: string) => (err: unknown) => {
    const origin = faultOrigin(err);
    const where = { component: origin.package ?? origin.component ?? "unknown", frame: origin.frame };
    if (state.phase === "running" && o.recover?.(err, origin)) {
      log.warn({ ...where, err: describe(err) }, `${kind} inside a platform library: its connector restarts`);
      return;
    }
    log.error({ ...where, err: describe(err) }, `${kind}: stopping`);
    if (state.phase === "running") stop(kind, EXIT_FAILURE);
  };
  const onRejection = fault("unhandled rejection");
  const onException = fault("uncaught exception");
  const signal = (name: StopSignal) => () => {
    const atMs = now();
    switch (decideSignal(state, name, atMs, windowMs)) {
      case "stop":
        state.first = { signal: name, atMs };
        return stop(name);
      case "repeat":
        return log.debug(
          { signal: name },
          "the same signal delivered again (e.g. forwarded by bun run): ignored",
        );
      case "exit-now":
        log.warn({ signal: name }, "a second signal: exiting now, without the rest of the ordered stop");
        return end(EXIT_FAILURE);
      case "ignore":
        return;
    }
  };
  const onSignal = { SIGINT: signal("SIGINT"), SIGTERM: signal("SIGTERM") };
  for (const s of STOP_SIGNALS) o.events.on(s, onSignal[s]);
  o.events.on("unhandledRejection", onRejection);
  o.events.on("uncaughtException", onException);
  return { done, stop };
}
