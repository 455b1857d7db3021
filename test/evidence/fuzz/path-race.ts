/**
 * The path-swap-race item: a racing process (racer.ts) flips a directory between a real directory and a
 * symlink to ~/.ssh while the path check (checkLocalPath) runs in a loop on a file inside it. Every
 * accepted check must hand over a descriptor of the file it checked (never a byte of the key), every
 * refusal must be 400 VALIDATION_FAILED with a rule, and both must occur.
 */
import { existsSync, mkdirSync, readFileSync, readSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkLocalPath, type PathPolicy } from "../../../src/send/attachment-rules.ts";
import { ROOT, waitFor } from "../../helpers/process.ts";
import { tempDir } from "../../helpers/temp.ts";
import { MAX_BYTES } from "./path-corpus.ts";
import type { FuzzItem, Outcome } from "./types.ts";

export const swapRace: FuzzItem = {
  id: "path-swap-race",
  tried:
    "A racing process flips a directory between a real directory and a symlink to ~/.ssh (rename away, symlink, unlink, rename back) while the path check runs in a loop on a file inside it (1.5 s; --long 150 s)",
  held: "every accepted check hands over a descriptor of the checked file (never a byte of the key); every refusal is 400 VALIDATION_FAILED with a rule (no raw error); accepted and refused both occur",
  async run({ scale }): Promise<Outcome> {
    const home = tempDir("gw-fuzz-race-");
    mkdirSync(join(home, ".ssh"), { recursive: true });
    writeFileSync(join(home, ".ssh/id_ed25519"), "CANARY-SSH-KEY");
    mkdirSync(join(home, "Documents/flip"), { recursive: true });
    writeFileSync(join(home, "Documents/flip/id_ed25519"), "BENIGN");
    const policy: PathPolicy = {
      homeDir: home,
      platform: process.platform,
      ownPaths: [],
      roots: null,
      maxBytes: MAX_BYTES,
    };
    const ms = 1_500 * scale;
    const racer = Bun.spawn(
      [process.execPath, join(ROOT, "test/evidence/fuzz/racer.ts"), home, String(ms + 2_000)],
      {
        stdout: "ignore",
        stderr: "inherit",
      },
    );
    // Under way once the racer has moved the directory away for the first time (a deadline, not a guess).
    await waitFor(
      () => (existsSync(join(home, "Documents/flip.real")) ? true : undefined),
      "the racer to start flipping",
      10_000,
      1,
    );
    const failures: string[] = [];
    const rules = new Map<string, number>();
    let cases = 0;
    const end = Date.now() + ms;
    try {
      while (Date.now() < end && failures.length < 5) {
        cases++;
        let checked: ReturnType<typeof checkLocalPath>;
        try {
          checked = checkLocalPath(join(home, "Documents/flip/id_ed25519"), "attachments.0.path", policy);
        } catch (err) {
          const e = err as { code?: string; status?: number; details?: { rule?: string } };
          if (e.code !== "VALIDATION_FAILED" || e.status !== 400 || !e.details?.rule)
            failures.push(`a raw error: ${String(err)}`);
          else rules.set(e.details.rule, (rules.get(e.details.rule) ?? 0) + 1);
          continue;
        }
        rules.set("accepted", (rules.get("accepted") ?? 0) + 1);
        const bytes = readChecked(checked);
        if (bytes.includes("CANARY")) failures.push(`an accepted check reads the key (${checked.path})`);
      }
    } finally {
      racer.kill();
      await racer.exited;
    }
    if (!rules.get("accepted")) failures.push("no check was accepted: the race did not run as designed");
    const seen = [...rules.entries()].map(([k, n]) => `${k} ×${n}`).join(", ");
    return { cases, failures, notes: [`path-swap-race outcomes: ${seen}`] };
  },
};

/** What a send would read: the checked descriptor when there is one, else the path. */
function readChecked(checked: ReturnType<typeof checkLocalPath>): string {
  const c = checked as { path: string; fd?: number; close?: () => void };
  if (typeof c.fd === "number") {
    try {
      const buf = Buffer.alloc(MAX_BYTES);
      const n = readSync(c.fd, buf, 0, MAX_BYTES, 0);
      return buf.subarray(0, n).toString();
    } finally {
      c.close?.();
    }
  }
  try {
    return readFileSync(c.path, "utf8");
  } catch {
    return "";
  }
}
