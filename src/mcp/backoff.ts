/**
 * How long `gw mcp`'s followers wait before asking gw serve again after a failed answer. Pure: the
 * attempt, the answer and a random number in, milliseconds out. A 429 or 503 that says when to come back
 * (`Retry-After` in seconds, else `error.details.retry_after_s`) is honoured, capped at RETRY_AFTER_MAX_MS,
 * and never undercut; anything else takes the capped exponential BACKOFF_MS. Jitter keeps many followers
 * refused together from coming back together.
 */

/** Waits after 1, 2, 3, 4 and 5+ failures in a row (before jitter). */
export const BACKOFF_MS = [250, 500, 1000, 2000, 5000] as const;
/** The longest wait a Retry-After can ask of a follower (before jitter). */
export const RETRY_AFTER_MAX_MS = 30_000;
/**
 * ±20 % around a backoff step ("equal" jitter rather than "full": a step never shrinks to nothing, so a
 * down service is not asked again at once). A Retry-After is only stretched, by 0 to +20 %: the service
 * said not before then.
 */
export const JITTER = 0.2;

/** What the wait depends on in a failed answer (an ApiResponse is one). */
export interface FailedAnswer {
  status: number;
  body: unknown;
  /** The `Retry-After` header as sent, if any. */
  retryAfter?: string | null;
}

/** Seconds a refused answer asks to wait: `Retry-After` (delta-seconds), else `details.retry_after_s`; null if neither is positive. */
export function retryAfterS(a: FailedAnswer): number | null {
  const header = a.retryAfter?.trim() ?? "";
  if (/^\d+$/.test(header) && Number(header) > 0) return Number(header);
  const details = (a.body as { error?: { details?: { retry_after_s?: unknown } } } | null)?.error?.details;
  const s = details?.retry_after_s;
  return typeof s === "number" && Number.isFinite(s) && s > 0 ? s : null;
}

/**
 * Milliseconds to wait after `attempt` earlier failures in a row (0 for the first), given the failed answer
 * and `random` in [0, 1). A 429/503 with a wait: that wait (at most RETRY_AFTER_MAX_MS) stretched by
 * 0..JITTER; otherwise BACKOFF_MS's step for the attempt, times 1 ± JITTER.
 */
export function backoffMs(attempt: number, answer: FailedAnswer, random: number): number {
  const r = Number.isFinite(random) ? Math.min(1, Math.max(0, random)) : 0.5;
  const asked = answer.status === 429 || answer.status === 503 ? retryAfterS(answer) : null;
  if (asked !== null) return Math.round(Math.min(asked * 1000, RETRY_AFTER_MAX_MS) * (1 + JITTER * r));
  const at = Number.isNaN(attempt) ? 0 : Math.min(Math.max(0, Math.floor(attempt)), BACKOFF_MS.length - 1);
  return Math.round((BACKOFF_MS[at] as number) * (1 - JITTER + 2 * JITTER * r));
}
