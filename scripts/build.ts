/**
 * `bun run build`: the host binary dist/gw. `bun run build:release`: that, plus one binary per release
 * target and dist/SHA256SUMS (sha256sum format, so `shasum -a 256 -c SHA256SUMS` checks them).
 * One set of flags for every build: `--bytecode` (needs `--format=esm`) precompiles the bundle so start-up
 * skips parsing (bench/startup.ts); no identifier minification (it breaks Elysia's compiled validators,
 * docs: bun-elysia.md rule 1); `--sourcemap` embeds the source map (+3 MB), so stack traces name
 * `src/…` and `node_modules/<package>/…` as from source: logs stay readable, and the process-level
 * policy tells a platform library's fault from gw's own (core/fault-origin.ts). The API viewers' files are
 * embedded gzip-compressed (`--asset`, src/http/viewer-files.ts), not imported. The macOS binaries still
 * need a signature on a Mac (docs/RELEASING.md).
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { EMBEDDED_FOLDER, embeddedName, VIEWER_FILES } from "../src/http/viewer-files.ts";

const ROOT = join(import.meta.dir, "..");
export const FLAGS = [
  "--compile",
  "--bytecode",
  "--format=esm",
  "--minify-whitespace",
  "--minify-syntax",
  "--sourcemap",
] as const;
const ASSETS_DIR = join(ROOT, "dist", EMBEDDED_FOLDER);
/** gw's flags beyond FLAGS: the compressed viewer files (written by writeAssets). */
export const ASSET_FLAGS = [`--asset=${ASSETS_DIR}`] as const;

/** Writes the viewer files, gzip-compressed, where ASSET_FLAGS embeds them from. */
export function writeAssets(): void {
  mkdirSync(ASSETS_DIR, { recursive: true });
  for (const spec of Object.values(VIEWER_FILES)) {
    const bytes = readFileSync(Bun.resolveSync(spec, ROOT));
    writeFileSync(join(ASSETS_DIR, embeddedName(spec)), Bun.gzipSync(bytes, { level: 9 }));
  }
}

export const TARGETS = [
  ["bun-darwin-arm64", "dist/gw-darwin-arm64"],
  ["bun-darwin-x64", "dist/gw-darwin-x64"],
  ["bun-linux-x64", "dist/gw-linux-x64"],
] as const;

function build(args: string[]): void {
  const r = Bun.spawnSync([process.execPath, "build", "src/main.ts", ...FLAGS, ...ASSET_FLAGS, ...args], {
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  });
  if (r.exitCode !== 0) throw new Error(`bun build ${args.join(" ")} failed (exit ${r.exitCode})`);
}

if (import.meta.main) {
  writeAssets();
  build(["--outfile", "dist/gw"]);
  if (process.argv.includes("--release")) {
    for (const [target, out] of TARGETS) build([`--target=${target}`, "--outfile", out]);
    const sums = TARGETS.map(([, out]) => {
      const hash = createHash("sha256")
        .update(readFileSync(join(ROOT, out)))
        .digest("hex");
      return `${hash}  ${basename(out)}\n`;
    }).join("");
    writeFileSync(join(ROOT, "dist/SHA256SUMS"), sums);
    process.stdout.write(sums);
  }
}
