/**
 * Discord failures to gw outcomes (pure; discord.md §6–7). Errors are told apart by name and message, which
 * survive the compiled binary (`DiscordAPIError[code]`, `RateLimitError[route]`). A failed send becomes
 * PLATFORM_AUTH or PLATFORM_SEND_FAILED; a failed login is fatal when a person must act, else retried.
 */
import { AppError } from "../../core/errors.ts";

export const TOKEN_REJECTED =
  "Discord rejected the bot token: reset it in the Developer Portal (Bot → Reset Token), set GW_COMMUNITY_BOT_TOKEN and restart gw.";

/** Gateway close codes after which discord.js never reconnects, with what to do about them. */
export const FATAL_CLOSE: Record<number, string> = {
  4004: `${TOKEN_REJECTED} (close 4004)`,
  4010: "Discord refused the shard settings (close 4010); report this as a gw bug.",
  4011: "Discord requires sharding for this bot (close 4011); gw runs one shard.",
  4012: "Discord refused the gateway version (close 4012); upgrade gw.",
  4013: "Discord refused the intents (close 4013); report this as a gw bug.",
  4014: "Discord refused the privileged intents (close 4014): enable the Message Content intent under Bot → Privileged Gateway Intents in the Developer Portal, then restart gw.",
};

interface ErrorLike {
  name?: string;
  message?: string;
  status?: number;
  code?: number | string;
  retryAfter?: number;
  global?: boolean;
  scope?: string;
}

const like = (err: unknown): ErrorLike => (typeof err === "object" && err !== null ? (err as ErrorLike) : {});

/** A 401, or the REST client's "token not set" after an earlier 401. */
export function isTokenRejection(err: unknown): boolean {
  const e = like(err);
  return (
    (e.name?.startsWith("DiscordAPIError") === true && e.status === 401) ||
    (e.message ?? "").includes("Expected token to be set")
  );
}

/** Discord refused the request itself (a 4xx; a 429 is a RateLimitError, not this): asking again will not help. */
export function isRefused(err: unknown): boolean {
  const e = like(err);
  return e.name?.startsWith("DiscordAPIError") === true && (e.status ?? 0) >= 400 && (e.status ?? 0) < 500;
}

/** The channel is gone or closed to the bot (403/404): asking again will not help. */
export function isChannelGone(err: unknown): boolean {
  const e = like(err);
  return e.name?.startsWith("DiscordAPIError") === true && (e.status === 403 || e.status === 404);
}

/**
 * A rejected token or a 403 → PLATFORM_AUTH; other API errors, HTTPError (5xx after retries),
 * RateLimitError (a wait too long to take: nothing sent) and connection failures → PLATFORM_SEND_FAILED;
 * a timeout → PLATFORM_SEND_FAILED with an unknown outcome.
 */
export function sendFailure(err: unknown): AppError {
  const e = like(err);
  const name = e.name ?? "";
  const reason = String(e.message ?? err).slice(0, 300);
  const wrap = (code: "PLATFORM_AUTH" | "PLATFORM_SEND_FAILED", message: string, details: object) =>
    new AppError(code, message, { ...details }, { cause: err });
  if (isTokenRejection(err)) return wrap("PLATFORM_AUTH", TOKEN_REJECTED, { status: 401 });
  if (name.startsWith("DiscordAPIError")) {
    const details = { status: e.status ?? null, discord_code: e.code ?? null, discord_message: reason };
    if (e.status === 403)
      return wrap(
        "PLATFORM_AUTH",
        "Discord refused the send: the bot lacks access or permission in this channel, or the user does not accept its DMs.",
        details,
      );
    return wrap("PLATFORM_SEND_FAILED", "Discord refused the message.", details);
  }
  if (name.startsWith("RateLimitError"))
    return wrap(
      "PLATFORM_SEND_FAILED",
      "Discord rate-limited this send for longer than gw waits; nothing was sent. Retry after the wait.",
      {
        reason: "rate_limited",
        retry_after_ms: e.retryAfter ?? null,
        global: e.global ?? false,
        scope: e.scope ?? null,
      },
    );
  if (name === "HTTPError")
    return wrap("PLATFORM_SEND_FAILED", "Discord failed to answer (server error, after retries).", {
      status: e.status ?? null,
    });
  if (name === "AbortError" || name === "TimeoutError")
    return wrap(
      "PLATFORM_SEND_FAILED",
      "Discord did not answer in time; whether the message was sent is unknown.",
      {
        outcome: "unknown",
        reason: "timeout",
      },
    );
  return wrap("PLATFORM_SEND_FAILED", "Could not reach Discord.", { reason });
}

/**
 * Why login failed: for good (a rejected token or refused intents: a person must act, and FATAL_CLOSE says
 * what to do) or for now (the reason, retried).
 */
export function loginFailure(err: unknown): { fatal: string } | { retry: string } {
  const e = like(err);
  const text = e.message ?? String(err);
  if (e.code === "TokenInvalid" || /Authentication failed/i.test(text)) return { fatal: TOKEN_REJECTED };
  if (/disallowed intents/i.test(text)) return { fatal: FATAL_CLOSE[4014] as string };
  if (/invalid shard|sharding is required|invalid API version|invalid intents/i.test(text))
    return { fatal: `Discord refused the connection: ${text}.` };
  return { retry: text.slice(0, 200) };
}
