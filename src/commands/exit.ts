/**
 * How a command ends. Commands return an exit code or throw CommandError; only main.ts calls
 * process.exit. Codes (decisions.md): 0 clean stop, 2 configuration error, 1 anything else.
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_CONFIG = 2;

export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
  ) {
    super(message);
  }
}

/** What every command receives from main.ts: the process's environment, made explicit. */
export interface CommandContext {
  argv: readonly string[];
  env: Record<string, string | undefined>;
  platform: NodeJS.Platform;
  homeDir: string;
  cwd: string;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown; isTTY?: boolean };
}
