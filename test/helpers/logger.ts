/** A Logger that records entries, for asserting what the code under test logged. */
import type { Logger } from "../../src/core/ports.ts";

export interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  obj: object;
  msg: string;
}

export function recordingLogger(entries: LogEntry[] = []): Logger & { entries: LogEntry[] } {
  const at =
    (level: LogEntry["level"]) =>
    (obj: object, msg = "") =>
      void entries.push({ level, obj, msg });
  return {
    entries,
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: () => recordingLogger(entries),
  };
}
