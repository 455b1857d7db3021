/**
 * The answer of a long poll that would have to wait while the table of held polls is full (extensions.md
 * §4): 503 SERVICE_BUSY with `details.retry_after_s`, which app.ts's error mapper also writes as
 * `Retry-After`, never an empty 200 (a follower would ask again at once). Only a request with nothing to
 * answer gets it: a ready page is always answered. Pure.
 */
import { AppError } from "../core/errors.ts";

export const BUSY_RETRY_MIN_S = 1;
export const BUSY_RETRY_MAX_S = 5;

/**
 * Seconds to ask a refused long poll to wait: a tenth of the wait it asked for, 1 to 5 s. A client ready
 * to wait W seconds for news takes W/10 more in its stride, so the refusal costs it little, while a crowd
 * of refused followers asks at most once per 1-5 s each instead of spinning. Held polls end within seconds
 * as messages arrive or their waits end, so a place is usually free again by then.
 */
export function busyRetryAfterS(waitS: number): number {
  const s = Math.ceil(Math.max(0, waitS) / 10);
  return Math.min(BUSY_RETRY_MAX_S, Math.max(BUSY_RETRY_MIN_S, s));
}

export function serviceBusy(waitS: number): AppError {
  return new AppError("SERVICE_BUSY", "Too many long polls are held; ask again after Retry-After seconds.", {
    retry_after_s: busyRetryAfterS(waitS),
  });
}
