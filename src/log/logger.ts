/**
 * Builds the process logger (runner; called by the composition root only): pino JSON lines to
 * `<log dir>/gw.log` (file 0600, dir 0700) and to stderr (a short human form when stderr is a
 * terminal). Both destinations are synchronous so no line is lost on a fast exit; stdout is never
 * used, so `gw mcp` keeps it for protocol frames. Secrets are redacted by key and by value.
 */
import { chmodSync, closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { redactKeys, secretScrubber } from "./redact.ts";

export interface LoggerOptions {
  /** Where gw.log goes; null logs to stderr only. */
  dir: string | null;
  level: string;
  secrets: readonly string[];
  stderr: { write(s: string): unknown; isTTY?: boolean };
  bindings?: Record<string, unknown>;
}

export type GwLogger = pino.Logger;

export function createLogger(opts: LoggerOptions): GwLogger {
  const scrub = secretScrubber(opts.secrets);
  const streams: pino.StreamEntry[] = [];
  if (opts.dir) {
    const file = join(opts.dir, "gw.log");
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    closeSync(openSync(file, "a", 0o600));
    chmodSync(file, 0o600);
    const dest = pino.destination({ dest: file, sync: true });
    streams.push({ level: "trace", stream: { write: (line: string) => dest.write(scrub(line)) } });
  }
  const pretty = opts.stderr.isTTY === true;
  streams.push({
    level: "trace",
    stream: { write: (line: string) => opts.stderr.write(scrub(pretty ? prettyLine(line) : line)) },
  });
  return pino(
    {
      level: opts.level,
      base: opts.bindings ?? {},
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { log: (obj) => redactKeys(obj) as Record<string, unknown> },
    },
    pino.multistream(streams),
  );
}

const LEVELS: Record<number, string> = {
  10: "TRACE",
  20: "DEBUG",
  30: "INFO",
  40: "WARN",
  50: "ERROR",
  60: "FATAL",
};

function prettyLine(line: string): string {
  try {
    const { time, level, msg, pid: _pid, hostname: _h, ...rest } = JSON.parse(line);
    const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : "";
    return `${String(time).slice(11, 23)} ${LEVELS[level] ?? level} ${msg ?? ""}${extra}\n`;
  } catch {
    return line;
  }
}
