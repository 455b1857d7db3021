/**
 * Builds the process logger (runner; called by the composition root only): pino JSON lines to a daily file in
 * the log dir and to stderr, secrets redacted by key and by value. stdout is never used, so `gw mcp` keeps it
 * for protocol frames. Each long-running face writes files of its own name (`gw`, `receiver`, `mcp`), so
 * their rotations never prune each other. A file that cannot be written (disk full) never stops the process.
 */
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import pinoRoll from "pino-roll";
import { redactKeys, secretScrubber } from "./redact.ts";

export const LOG_FILES_KEPT = 14;
/** Lines kept while the file cannot be written, written once it can; later ones are dropped. */
export const LOG_BUFFER_MAX_BYTES = 4 * 1024 * 1024;
/** A file that cannot be written is reported on stderr at most once per this. */
export const LOG_FAILURE_REPORT_MS = 60_000;

export interface LoggerOptions {
  /** Where the log files go; null logs to stderr only. */
  dir: string | null;
  /** The files' name: `gw` (serve, demo), `receiver`, `mcp`. */
  name?: string;
  level: string;
  /**
   * The least level also written to stderr ("silent": none); the default is everything. Set for a login
   * service (GW_LOG_STDERR_LEVEL), so its never-rotated stderr file need not repeat the rotated files.
   */
  stderrLevel?: string;
  secrets: readonly string[];
  stderr: { write(s: string): unknown; isTTY?: boolean };
  bindings?: Record<string, unknown>;
}

export type GwLogger = pino.Logger;

/**
 * Files: pino-roll (the pino project's own rotating stream; it works inside the compiled binary and, being a
 * SonicBoom, writes synchronously, so no line is lost on a fast exit) writes `<name>.<yyyy-MM-dd>.<n>.log`,
 * starts a new file each day and keeps the newest LOG_FILES_KEPT; `gw` also keeps `current.log` pointing at
 * its newest file. stderr gets a short human form when it is a terminal.
 */
export async function createLogger(opts: LoggerOptions): Promise<GwLogger> {
  const scrub = secretScrubber(opts.secrets);
  const streams: pino.StreamEntry[] = [];
  if (opts.dir) {
    const name = opts.name ?? "gw";
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
    const file = await pinoRoll({
      file: join(opts.dir, name),
      extension: ".log",
      frequency: "daily",
      dateFormat: "yyyy-MM-dd",
      limit: { count: LOG_FILES_KEPT - 1, removeOtherLogFiles: true },
      symlink: name === "gw",
      sync: true,
      mode: 0o600,
      maxLength: LOG_BUFFER_MAX_BYTES,
    });
    // Without a listener, SonicBoom's 'error' (ENOSPC, EFBIG) would be thrown and end the process.
    let reportedAt = Number.NEGATIVE_INFINITY;
    file.on("error", (err: Error) => {
      const now = Date.now();
      if (now - reportedAt < LOG_FAILURE_REPORT_MS) return;
      reportedAt = now;
      const line = {
        level: 50,
        time: new Date(now).toISOString(),
        err: String(err),
        msg: "the log file cannot be written; lines are kept and written once it can be",
      };
      opts.stderr.write(`${JSON.stringify(line)}\n`);
    });
    streams.push({ level: "trace", stream: { write: (line: string) => file.write(scrub(line)) } });
  }
  const pretty = opts.stderr.isTTY === true;
  if (opts.stderrLevel !== "silent")
    streams.push({
      level: (opts.stderrLevel ?? "trace") as pino.Level,
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

/** The newest log file of a face in a log dir (for tests and `gw doctor`), or null. */
export function currentLogFile(dir: string, name = "gw"): string | null {
  const pattern = new RegExp(`^${name}\\.(\\d{4}-\\d{2}-\\d{2})\\.(\\d+)\\.log$`);
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return null;
  }
  const newest = files
    .map((f) => pattern.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) =>
      a[1] === b[1] ? Number(a[2]) - Number(b[2]) : (a[1] as string) < (b[1] as string) ? -1 : 1,
    )
    .at(-1);
  return newest ? join(dir, newest[0]) : null;
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
