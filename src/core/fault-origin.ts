/**
 * Where an error was raised (pure): the npm package or the gw component of the first frame of its stack
 * that names a file (native and runtime frames skipped). Frames read `node_modules/<package>/…` or
 * `src/<component>/…` both from source and in the compiled binary, which embeds its source map
 * (scripts/build.ts). The process-level policy (commands/lifecycle.ts) uses it to tell a platform
 * library's fault, which its connector survives by restarting, from gw's own, which ends the process.
 */

export interface FaultOrigin {
  /** The npm package that raised it (`discord.js`, `@discordjs/ws`), when the first file is in one. */
  package: string | null;
  /** The gw folder under `src/` (`webhooks`, `connectors/community-chat`), when the first file is gw's. */
  component: string | null;
  /** The first frame that names a file, as printed (for the log). */
  frame: string | null;
}

const FRAME_LOCATION = /\(([^()]+)\)\s*$|^\s*at\s+([^\s()]+)\s*$/;

/** The file of one stack line (`at f (path:1:2)` or `at path:1:2`); null for native and runtime frames. */
function fileOf(line: string): string | null {
  const m = FRAME_LOCATION.exec(line.trim());
  const location = m?.[1] ?? m?.[2];
  if (!location) return null;
  const file = location.replace(/:\d+(?::\d+)?$/, "");
  if (!file.includes("/") || file.startsWith("node:") || file.startsWith("native")) return null;
  return file;
}

function packageOf(file: string): string | null {
  const at = file.lastIndexOf("node_modules/");
  if (at === -1) return null;
  const [first, second] = file.slice(at + "node_modules/".length).split("/");
  if (!first) return null;
  return first.startsWith("@") && second ? `${first}/${second}` : first;
}

function componentOf(file: string): string | null {
  const m = /(?:^|\/)src\/(.+)\/[^/]+$/.exec(file);
  if (m?.[1]) return m[1];
  return /(?:^|\/)src\/[^/]+$/.test(file) ? "." : null;
}

export function faultOrigin(err: unknown): FaultOrigin {
  const stack = err instanceof Error && typeof err.stack === "string" ? err.stack : "";
  for (const line of stack.split("\n")) {
    if (!line.trim().startsWith("at ")) continue;
    const file = fileOf(line);
    if (!file) continue;
    return {
      package: packageOf(file),
      component: packageOf(file) ? null : componentOf(file),
      frame: line.trim(),
    };
  }
  return { package: null, component: null, frame: null };
}

/** Whether `pkg` is one of `owned`: a package name, or a scope (`@discordjs/`) covering all of its packages. */
export function packageIn(pkg: string | null, owned: readonly string[]): boolean {
  if (pkg === null) return false;
  return owned.some((o) => (o.endsWith("/") ? pkg.startsWith(o) : pkg === o));
}
