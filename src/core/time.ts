/**
 * Time formats. Internally every instant is epoch milliseconds (an integer).
 * Emitted timestamps are exactly `YYYY-MM-DDTHH:MM:SS.mmmZ`; inputs accept any RFC 3339 form
 * (`Z`, `z`, `+HH:MM`, `-HH:MM`, `T`/`t`/space separator, any number of fraction digits).
 * Fractions finer than a millisecond are truncated, which keeps `message_ts > since` exact for
 * millisecond-precision messages.
 */

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`. */
export function formatTimestamp(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/** Parses an RFC 3339 date-time to epoch milliseconds, or returns null when it is not one. */
export function parseTimestamp(input: string): number | null {
  const m = RFC3339.exec(input);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, z, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  let offsetMin = 0;
  if (!z) {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return null;
    offsetMin = (sign === "-" ? -1 : 1) * (offH * 60 + offM);
  }
  const ms = frac ? Number(frac.slice(0, 3).padEnd(3, "0")) : 0;
  // A leap second (:60) is read as the last millisecond of that minute.
  const instant = new Date(0);
  instant.setUTCFullYear(year, month - 1, day);
  instant.setUTCHours(hour, minute, Math.min(second, 59), second === 60 ? 999 : ms);
  return instant.getTime() - offsetMin * 60_000;
}

/** Canonical form of an RFC 3339 input (`null` when the input is not valid). */
export function canonicalTimestamp(input: string): string | null {
  const ms = parseTimestamp(input);
  return ms === null ? null : formatTimestamp(ms);
}

function daysInMonth(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}
