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
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a program without a shell: argv only, `stdin` written then closed, killed at the timeout. */
export interface Spawner {
  run(
    argv: readonly string[],
    opts: { stdin: string; timeoutMs: number; env: Record<string, string> },
  ): Promise<SpawnResult>;
}
