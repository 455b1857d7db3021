/**
 * Ports: the only ways the core reaches the clock and the log. The composition root
 * (src/commands/*) builds the real ones; tests pass their own.
 */

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The subset of pino's logger the core uses, so tests can hand in a recorder. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

export interface SpawnResult {
  /** null when the run timed out or ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the program, if one did. */
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs a program without a shell: argv only, `stdin` written then closed, its whole process group
 * stopped at the timeout (SIGTERM, then SIGKILL after `killGraceMs`) and reaped after it exits.
 */
export interface Spawner {
  run(
    argv: readonly string[],
    opts: {
      stdin: string;
      timeoutMs: number;
      env: Record<string, string>;
      cwd?: string;
      killGraceMs?: number;
      /** After a normal exit, how long descendants may keep the output pipes open. */
      pipeGraceMs?: number;
      /** Stops the run early, as the timeout does. */
      signal?: AbortSignal;
    },
  ): Promise<SpawnResult>;
}
