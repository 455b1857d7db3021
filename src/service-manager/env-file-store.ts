/**
 * Reads and creates the env file (runner). An existing file is read as it is and never rewritten; a
 * malformed one is a configuration error naming the file and each bad line. A new file is created with
 * O_EXCL and mode 0600 in a 0700 config dir, so a file that appears meanwhile is never overwritten.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { type EnvVars, parseEnvFile, renderEnvFile } from "./env-file.ts";
import { ServiceError } from "./errors.ts";

export interface ExistingEnvFile {
  vars: [string, string][];
  /** Permission bits, e.g. 0o600. */
  mode: number;
}

/** 32 random bytes as 64 lowercase hex characters. */
export function newBearerToken(): string {
  return randomBytes(32).toString("hex");
}

/** The parsed file, or null when there is none. */
export function readEnvFile(path: string): ExistingEnvFile | null {
  let text: string;
  let mode: number;
  try {
    text = readFileSync(path, "utf8");
    mode = statSync(path).mode & 0o777;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new ServiceError(`gw service: cannot read the env file ${path}: ${(err as Error).message}`);
  }
  const parsed = parseEnvFile(text);
  if (!parsed.ok) {
    const lines = parsed.problems.map((p) => `  ${path}:${p.line}: ${p.problem}`);
    throw new ServiceError(
      `configuration error: the env file ${path} has ${lines.length === 1 ? "a bad line" : "bad lines"}:\n${lines.join("\n")}\nFix the line${lines.length === 1 ? "" : "s"} (or move the file away to have a fresh one written) and run the command again.`,
      true,
    );
  }
  return { vars: parsed.vars, mode };
}

export function createEnvFile(path: string, vars: EnvVars): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(path, renderEnvFile(vars), { mode: 0o600, flag: "wx" });
  } catch (err) {
    throw new ServiceError(`gw service: cannot create the env file ${path}: ${(err as Error).message}`);
  }
}
