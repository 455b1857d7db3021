/**
 * Delivery outcomes and the retry schedule (pure; spec "Webhook delivery" table, decisions.md).
 * Any 2xx delivers. Any 4xx is dead at once. 5xx, 3xx (redirects are never followed), timeouts and
 * connection failures are retried after GW_WEBHOOK_RETRY_DELAYS_MS[attempt - 1] ±20 % jitter, until
 * the 5th attempt fails: then dead. Dead rows are never retried automatically.
 */

export const MAX_ATTEMPTS = 5;
export const JITTER = 0.2;

export type AttemptResult = { status: number } | { error: string };
export type Next =
  | { state: "delivered" }
  | { state: "dead"; reason: string }
  | { state: "retry"; delayMs: number };

/** What happens after attempt number `attempt` (1-based) ended with `result`. `random` is in [0, 1). */
export function nextStep(
  attempt: number,
  result: AttemptResult,
  delaysMs: readonly number[],
  random: number,
): Next {
  if ("status" in result) {
    if (result.status >= 200 && result.status < 300) return { state: "delivered" };
    if (result.status >= 400 && result.status < 500)
      return { state: "dead", reason: `HTTP ${result.status}` };
  }
  if (attempt >= MAX_ATTEMPTS) return { state: "dead", reason: `failed ${MAX_ATTEMPTS} attempts` };
  const base = delaysMs[Math.min(attempt, delaysMs.length) - 1] ?? 0;
  return { state: "retry", delayMs: Math.round(base * (1 - JITTER + 2 * JITTER * random)) };
}
