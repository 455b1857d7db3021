/**
 * Reads `launchctl print gui/<uid>/<label>` (pure). Only the service's own top-level properties
 * count (`state = running`, `pid = 123`, `last exit code = 0` or `78: EX_CONFIG` or `(never
 * exited)`, `program = /path`); nested blocks such as endpoints or event triggers, which have their own
 * `state` lines, are skipped by brace depth.
 */

export interface LaunchctlInfo {
  /** e.g. running, not running, spawn scheduled. */
  state: string | null;
  pid: number | null;
  /** The number of `last exit code`; null when it never exited. */
  lastExitCode: number | null;
  /** `last exit code` as launchctl wrote it. */
  lastExit: string | null;
  program: string | null;
}

export function parseLaunchctlPrint(text: string): LaunchctlInfo {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  const props = new Map<string, string>();
  const top = lines[0]?.trimEnd().endsWith("{") ? 1 : 0;
  let depth = 0;
  for (const line of lines) {
    const t = line.trim();
    if (t === "}" || t === "};") {
      depth--;
      continue;
    }
    if (depth === top) {
      const eq = t.indexOf(" = ");
      if (eq > 0) {
        const key = t.slice(0, eq);
        if (!props.has(key)) props.set(key, t.slice(eq + 3));
      }
    }
    if (t.endsWith("{")) depth++;
  }
  const pid = props.get("pid");
  const lastExit = props.get("last exit code") ?? null;
  const code = lastExit?.match(/^-?\d+/)?.[0];
  return {
    state: props.get("state") ?? null,
    pid: pid !== undefined && /^\d+$/.test(pid) ? Number(pid) : null,
    lastExitCode: code === undefined ? null : Number(code),
    lastExit,
    program: props.get("program") ?? null,
  };
}
