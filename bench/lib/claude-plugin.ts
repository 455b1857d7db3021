/**
 * The Claude Code iMessage plugin as a peer of the iMessage benchmarks. Its source is never part of this
 * repository: at run time `server.ts` and `package.json` of `external_plugins/imessage` are read from a
 * local git snapshot of anthropics/claude-plugins-official (BENCH_CLAUDE_PLUGIN_GIT, a bare git dir) into
 * a temp dir whose `node_modules` is a symlink to this repository's (it needs only
 * @modelcontextprotocol/sdk and zod, both dependencies here), with its state dir holding an access.json
 * that allowlists the friend. Returns why it cannot run instead of throwing: the benchmarks skip it then.
 */
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLAUDE_ACCESS } from "./chatdb.ts";

export const CLAUDE_PLUGIN_GIT =
  process.env.BENCH_CLAUDE_PLUGIN_GIT ?? "/work/.mirror/anthropics+claude-plugins-official/repo";
const PLUGIN_DIR = "external_plugins/imessage";
const ROOT = join(import.meta.dir, "../..");

export interface ClaudePlugin {
  /** Temp dir holding server.ts, package.json and the node_modules symlink; remove it when done. */
  dir: string;
  server: string;
  stateDir: string;
  /** The snapshot's commit the files came from. */
  commit: string;
}

export function prepareClaudePlugin(): ClaudePlugin | { skip: string } {
  if (!existsSync(CLAUDE_PLUGIN_GIT)) return { skip: `no snapshot at ${CLAUDE_PLUGIN_GIT}` };
  const git = (...args: string[]) => Bun.spawnSync(["git", "-C", CLAUDE_PLUGIN_GIT, ...args]);
  const commit = git("rev-parse", "HEAD").stdout.toString().trim();
  const server = git("show", `HEAD:${PLUGIN_DIR}/server.ts`);
  const pkg = git("show", `HEAD:${PLUGIN_DIR}/package.json`);
  if (server.exitCode !== 0 || pkg.exitCode !== 0)
    return { skip: `${PLUGIN_DIR}/{server.ts,package.json} not in ${CLAUDE_PLUGIN_GIT}` };
  for (const dep of ["@modelcontextprotocol/sdk", "zod"]) {
    if (!existsSync(join(ROOT, "node_modules", dep))) return { skip: `${dep} is not installed here` };
  }
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-claude-plugin-"));
  writeFileSync(join(dir, "server.ts"), server.stdout);
  writeFileSync(join(dir, "package.json"), pkg.stdout);
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const stateDir = join(dir, "state");
  mkdirSync(stateDir, { mode: 0o700 });
  writeFileSync(join(stateDir, "access.json"), `${JSON.stringify(CLAUDE_ACCESS, null, 2)}\n`);
  return { dir, server: join(dir, "server.ts"), stateDir, commit: commit.slice(0, 12) };
}
