/**
 * The gw processes a test file leaves running for several tests: `stopAtEnd()`, called once at the top
 * of the file, returns the list to push them to; an afterAll hook stops each (SIGTERM, SIGKILL after
 * 10 s) and waits for it to exit. `killAfterEach()` is the same for processes a test starts for itself:
 * an afterEach hook kills each (SIGKILL, whatever state the test left it in) and waits for it to exit.
 */
import { afterAll, afterEach } from "bun:test";
import { type GwProcess, stopGw } from "./process.ts";

export function stopAtEnd(): GwProcess[] {
  const running: GwProcess[] = [];
  afterAll(async () => {
    for (const p of running.splice(0)) await stopGw(p);
  });
  return running;
}

export function killAfterEach(): GwProcess[] {
  const running: GwProcess[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) {
      p.proc.kill("SIGKILL");
      await p.exited;
    }
  });
  return running;
}
