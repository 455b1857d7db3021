/**
 * The one error type and the one code table. Every failure that reaches a client is an AppError;
 * its HTTP status comes from ERROR_STATUS and nowhere else. Foreign errors are wrapped at the
 * boundary with their cause kept (never shown to clients).
 */

export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  AGENT_ID_REQUIRED: 400,
  VALIDATION_FAILED: 422,
  IDEMPOTENCY_KEY_REUSE: 422,
  RATE_LIMITED: 429,
  MESSAGE_NOT_FOUND: 404,
  CHANNEL_NOT_FOUND: 404,
  ATTACHMENT_TOO_LARGE_FOR_PLATFORM: 413,
  PLATFORM_AUTH: 502,
  PLATFORM_SEND_FAILED: 502,
  INTERNAL_ERROR: 500,
  /** extensions.md §2: the target's platform cannot do this (iMessage cannot react or edit). */
  PLATFORM_UNSUPPORTED: 422,
  /** Not in the spec's table: a path or method the API does not have (e.g. POST /typing). */
  NOT_FOUND: 404,
  /** Not in the spec's table: the receiver cannot take a delivery now (its channel's queue is full, or
   * it is stopping); nothing was kept, and the sender retries it as it does any 5xx. */
  RECEIVER_BUSY: 503,
  /** Not in the spec's table: a long poll (`wait`) that would have to wait finds the table of held polls
   * full (extensions.md §4); `Retry-After` and `details.retry_after_s` say when to ask again. */
  SERVICE_BUSY: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  /** Overrides the table's status where the spec picks per route (VALIDATION_FAILED: 400 or 422). */
  readonly status: number;

  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options: { cause?: unknown; status?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.details = details;
    this.status = options.status ?? ERROR_STATUS[code];
  }

  toEnvelope(): ErrorEnvelope {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }
}

/** Wraps anything thrown into an AppError; an AppError passes through unchanged. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError("INTERNAL_ERROR", "Internal error.", {}, { cause: err });
}
