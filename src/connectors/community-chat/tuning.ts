/**
 * The Discord connector's timers and limits. Production values are DEFAULT_TUNING; tests shorten them
 * through the registry. Only the login deadline is also a user setting (GW_COMMUNITY_LOGIN_TIMEOUT_MS,
 * passed in by the registry).
 */
import { DOWNLOAD_TIMEOUT_MS } from "./attachments.ts";

export interface CommunityTuning {
  /** A login without a ready session by then is abandoned and retried; health turns `degraded`. */
  loginDeadlineMs: number;
  /** Connected but no heartbeat acknowledged this long: `degraded` (Discord beats every ~41 s). */
  heartbeatSilenceMs: number;
  restTimeoutMs: number;
  restRetries: number;
  /** A Discord rate limit longer than this fails the request (nothing sent) instead of being waited out. */
  maxRateLimitWaitMs: number;
  /** false removes discord.js's 5 s wait between IDENTIFYs (tests that re-identify). */
  throttleIdentify: boolean;
  downloadTimeoutMs: number;
  /** Waits between login attempts that failed for a reason worth retrying; the last repeats. */
  loginRetryMs: readonly number[];
  /** Longest wait between retries of a failed ingest. */
  ingestRetryMaxMs: number;
  /** How long `stop` waits for queued work to settle. */
  stopDrainMs: number;
  /** When a channel's catch-up failed, it is tried again after this long. */
  catchUpRetryMs: number;
  /** How often the connected mark is stored while connected (connected-mark.ts). */
  markEveryMs: number;
  /** How far the mark stays behind the last acknowledged heartbeat (messages on their way, clocks apart). */
  markMarginMs: number;
}

export const DEFAULT_TUNING: CommunityTuning = {
  loginDeadlineMs: 30_000,
  heartbeatSilenceMs: 100_000,
  restTimeoutMs: 10_000,
  restRetries: 2,
  maxRateLimitWaitMs: 3_000,
  throttleIdentify: true,
  downloadTimeoutMs: DOWNLOAD_TIMEOUT_MS,
  loginRetryMs: [2_000, 5_000, 15_000, 30_000, 60_000],
  ingestRetryMaxMs: 30_000,
  stopDrainMs: 5_000,
  catchUpRetryMs: 30_000,
  markEveryMs: 60_000,
  markMarginMs: 120_000,
};

/** Channels whose history is fetched at once during a catch-up. */
export const CATCH_UP_CONCURRENCY = 5;
