/**
 * One `gw doctor` finding and how it is shown (pure): `level: what — why — how to fix`, one line per
 * check, grouped under a heading per scope, or the same as JSON (each check with its scope). `fail` is
 * something gw cannot work around (exit 1); `warn` works but is worth knowing (exit 0); every non-ok
 * check says why and what to do. The scope says whose configuration a check is about: `config` is what
 * this process's environment would run (files, allowlist, chat.db, Messages, Discord token, webhook
 * target); `running` is what the service already running reports (it was started with its own).
 */
export type Level = "ok" | "warn" | "fail";
export type Scope = "config" | "running";

export interface Check {
  /** Stable name of the check, for --json consumers and the README's troubleshooting table. */
  id: string;
  level: Level;
  what: string;
  why?: string;
  fix?: string;
  /** Set by `inScope` when the report is put together. */
  scope?: Scope;
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

export const inScope = (scope: Scope, checks: readonly Check[]): Check[] =>
  checks.map(({ id, ...rest }) => ({ id, scope, ...rest }));

export function renderLine(c: Check): string {
  return [`${c.level}: ${c.what}`, c.why, c.fix].filter(Boolean).join(" — ");
}

/** The text report: each scope's heading (a line ending in `:`, never `ok|warn|fail: …`), then its lines. */
export function renderText(checks: readonly Check[], headings: Record<Scope, string>): string {
  const scopes: Scope[] = ["config", "running"];
  const sections = scopes
    .map((s) => [headings[s], ...checks.filter((c) => c.scope === s).map(renderLine)])
    .filter((lines) => lines.length > 1);
  const loose = checks.filter((c) => c.scope === undefined).map(renderLine);
  if (loose.length > 0) sections.unshift(loose);
  return `${sections.map((lines) => lines.join("\n")).join("\n\n")}\n`;
}

export function renderJson(checks: readonly Check[]): string {
  return `${JSON.stringify({ ok: passed(checks), checks }, null, 2)}\n`;
}

export const passed = (checks: readonly Check[]): boolean => checks.every((c) => c.level !== "fail");
