/**
 * The racing process of the path-swap-race item (path-race.ts): for `ms` milliseconds, flips
 * `<home>/Documents/flip` between the real directory and a symlink to `<home>/.ssh` (rename the directory
 * away, put the symlink in its place, remove it, rename the directory back), as fast as it can.
 * Usage: bun racer.ts <home> <ms>
 */
import { renameSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";

const [home, ms] = process.argv.slice(2) as [string, string];
const flip = join(home, "Documents/flip");
const away = join(home, "Documents/flip.real");
const target = join(home, ".ssh");
const end = Date.now() + Number(ms);
while (Date.now() < end) {
  try {
    renameSync(flip, away);
    symlinkSync(target, flip);
    unlinkSync(flip);
    renameSync(away, flip);
  } catch {
    // A step can fail only if the directory was left half-flipped by a kill; the next round repairs it.
  }
}
