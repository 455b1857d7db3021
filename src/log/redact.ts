/**
 * Redaction, applied to every log line: values under secret-looking keys become "[redacted]", and
 * any occurrence of a configured secret value (bearer token, webhook secret, bot token) is replaced
 * in the serialized line, wherever it appears. Pure.
 */

const SECRET_KEY = /token|secret|authorization|signature|password|cookie|api[-_]?key/i;
export const REDACTED = "[redacted]";

export function redactKeys(value: unknown, depth = 0): unknown {
  if (depth > 8 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return value;
  if (Array.isArray(value)) return value.map((v) => redactKeys(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      SECRET_KEY.test(k) && v !== null && v !== undefined && v !== "" ? REDACTED : redactKeys(v, depth + 1);
  }
  return out;
}

/** Returns a function that replaces every secret (and its JSON-escaped form) in a line. */
export function secretScrubber(secrets: readonly string[]): (line: string) => string {
  const needles = [...new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))]
    .filter((s) => s.length >= 4)
    .sort((a, b) => b.length - a.length);
  if (needles.length === 0) return (line) => line;
  return (line) => {
    let out = line;
    for (const n of needles) if (out.includes(n)) out = out.split(n).join(REDACTED);
    return out;
  };
}
