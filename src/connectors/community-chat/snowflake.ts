/**
 * Discord snowflakes (pure): decimal strings whose top bits are milliseconds since the Discord epoch.
 * Ids are compared as numbers (length first), never as plain strings.
 */

export const DISCORD_EPOCH_MS = 1_420_070_400_000;
const SNOWFLAKE = /^[1-9]\d{0,19}$/;

export function isSnowflake(v: unknown): v is string {
  return typeof v === "string" && SNOWFLAKE.test(v) && BigInt(v) < 1n << 64n;
}

/** The instant (epoch ms) a snowflake was made. */
export function snowflakeTime(id: string): number {
  return Number(BigInt(id) >> 22n) + DISCORD_EPOCH_MS;
}

/** The smallest snowflake made at `ms`: every id made later compares greater. */
export function snowflakeAt(ms: number): string {
  const since = Math.max(0, Math.floor(ms) - DISCORD_EPOCH_MS);
  return (BigInt(since) << 22n).toString();
}

/** `a` is a later snowflake than `b`. */
export function isLater(a: string, b: string): boolean {
  return a.length !== b.length ? a.length > b.length : a > b;
}

/** The later of two snowflakes (null counts as earliest). */
export function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return isLater(a, b) ? a : b;
}
