/**
 * How a long-running command (serve, receiver, mcp) ends: one policy for the three. SIGINT/SIGTERM start the
 * ordered stop, bounded by `stopDeadlineMs` (past it the command ends anyway, exit 1: what it acknowledged is
 * already committed); a second signal ends it at once. An unhandled rejection or exception that `recover`
 * does not take is logged with its component and ends in the ordered stop, exit 1. Only the commands touch
 * the real process.
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
}

export interface Lifecycle {
  /** The exit code, once the command has ended. */
  done: Promise<number>;
  /** Starts the ordered stop (nothing more while it runs; only a second signal cuts it short). */
  stop(reason: string, code?: number): void;
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

const describe = (err: unknown) =>
  err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);

export function superviseProcess(o: LifecycleOptions): Lifecycle {
  const { log } = o;
  let phase: "running" | "stopping" | "ended" = "running";
  let resolveDone: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    resolveDone = resolve;
  });

  const end = (code: number) => {
    if (phase === "ended") return;
    phase = "ended";
    for (const s of STOP_SIGNALS) o.events.off(s, onSignal[s]);
    o.events.off("unhandledRejection", onRejection);
    o.events.off("uncaughtException", onException);
    try {
      o.finish?.();
    } catch (err) {
      log.error({ err: describe(err) }, "clean-up at exit failed");
    }
    resolveDone(code);
  };

  const stop = (reason: string, code = EXIT_OK) => {
    if (phase !== "running") return;
    phase = "stopping";
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
    if (phase === "running" && o.recover?.(err, origin)) {
      log.warn({ ...where, err: describe(err) }, `${kind} inside a platform library: its connector restarts`);
      return;
    }
    log.error({ ...where, err: describe(err) }, `${kind}: stopping`);
    if (phase === "running") stop(kind, EXIT_FAILURE);
  };
  const onRejection = fault("unhandled rejection");
  const onException = fault("uncaught exception");
  const signal = (name: string) => () => {
    if (phase !== "stopping") return stop(name);
    log.warn({ signal: name }, "a second signal: exiting now, without the rest of the ordered stop");
    end(EXIT_FAILURE);
  };
  const onSignal = { SIGINT: signal("SIGINT"), SIGTERM: signal("SIGTERM") };
  for (const s of STOP_SIGNALS) o.events.on(s, onSignal[s]);
  o.events.on("unhandledRejection", onRejection);
  o.events.on("uncaughtException", onException);
  return { done, stop };
}
