/**
 * `bun run build:release`: the host binary (dist/gw) plus one binary per release target and
 * dist/SHA256SUMS (sha256sum format, so `shasum -a 256 -c SHA256SUMS` checks them). Same flags as
 * `bun run build`: no identifier minification (it breaks Elysia's compiled validators).
 * The macOS binaries still need an ad-hoc or Developer ID signature on a Mac (`codesign -s -`).
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const FLAGS = ["--compile", "--minify-whitespace", "--minify-syntax"];
const TARGETS = [
  ["bun-darwin-arm64", "dist/gw-darwin-arm64"],
  ["bun-darwin-x64", "dist/gw-darwin-x64"],
  ["bun-linux-x64", "dist/gw-linux-x64"],
] as const;

function build(args: string[]): void {
  const r = Bun.spawnSync(["bun", "build", "src/main.ts", ...FLAGS, ...args], {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (r.exitCode !== 0) throw new Error(`bun build ${args.join(" ")} failed (exit ${r.exitCode})`);
}

build(["--outfile", "dist/gw"]);
for (const [target, out] of TARGETS) build([`--target=${target}`, "--outfile", out]);

const sums = TARGETS.map(([, out]) => {
  const hash = createHash("sha256")
    .update(readFileSync(join(ROOT, out)))
    .digest("hex");
  return `${hash}  ${basename(out)}\n`;
}).join("");
writeFileSync(join(ROOT, "dist/SHA256SUMS"), sums);
process.stdout.write(sums);
