/**
 * One `gw doctor` finding and how it is shown (pure): `level: what — why — how to fix`, one line per
 * check, or the same as JSON. `fail` is something gw cannot work around (exit 1); `warn` works but is
 * worth knowing (exit 0); every non-ok check says why and what to do.
 */
export type Level = "ok" | "warn" | "fail";

export interface Check {
  /** Stable name of the check, for --json consumers and the README's troubleshooting table. */
  id: string;
  level: Level;
  what: string;
  why?: string;
  fix?: string;
}

export const ok = (id: string, what: string): Check => ({ id, level: "ok", what });
export const warn = (id: string, what: string, why: string, fix: string): Check => ({
  id,
  level: "warn",
  what,
  why,
  fix,
});
export const fail = (id: string, what: string, why: string, fix: string): Check => ({
  id,
  level: "fail",
  what,
  why,
  fix,
});

export function renderLine(c: Check): string {
  return [`${c.level}: ${c.what}`, c.why, c.fix].filter(Boolean).join(" — ");
}

export function renderJson(checks: readonly Check[]): string {
  return `${JSON.stringify({ ok: passed(checks), checks }, null, 2)}\n`;
}

export const passed = (checks: readonly Check[]): boolean => checks.every((c) => c.level !== "fail");
