/**
 * Per-channel token buckets (decisions.md): capacity GW_RATE_LIMIT_BURST, refill
 * GW_RATE_LIMIT_PER_CHANNEL_RPS tokens per second, one token per send. `takeToken` is the pure rule;
 * the limiter keeps one bucket per channel and reads the injected clock.
 */
import type { Clock } from "../core/ports.ts";

export interface Bucket {
  tokens: number;
  at: number;
}

export type Take =
  | { allowed: true; bucket: Bucket }
  | { allowed: false; bucket: Bucket; retryAfterS: number };

export function takeToken(prev: Bucket | undefined, now: number, ratePerS: number, burst: number): Take {
  const elapsedS = prev ? Math.max(0, now - prev.at) / 1000 : 0;
  const tokens = prev ? Math.min(burst, prev.tokens + elapsedS * ratePerS) : burst;
  if (tokens >= 1) return { allowed: true, bucket: { tokens: tokens - 1, at: now } };
  return {
    allowed: false,
    bucket: { tokens, at: now },
    retryAfterS: Math.max(1, Math.ceil((1 - tokens) / ratePerS)),
  };
}

export interface RateLimiter {
  /** Takes one token for the channel, or returns the whole seconds to wait. */
  take(channelId: string): { allowed: true } | { allowed: false; retryAfterS: number };
}

export function createRateLimiter(deps: { clock: Clock; ratePerS: number; burst: number }): RateLimiter {
  const buckets = new Map<string, Bucket>();
  return {
    take(channelId) {
      const r = takeToken(buckets.get(channelId), deps.clock.now(), deps.ratePerS, deps.burst);
      buckets.set(channelId, r.bucket);
      return r.allowed ? { allowed: true } : { allowed: false, retryAfterS: r.retryAfterS };
    },
  };
}
