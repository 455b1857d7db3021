/**
 * Temporary directories, removed when the whole run ends (test/setup.ts calls removeTempDirs from a
 * preloaded afterAll; a hook registered by a module that several test files import would be bound to the
 * first of them only, and bun test fires no process exit event).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

export function tempDir(prefix = "gw-test-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

export function removeTempDirs(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}
