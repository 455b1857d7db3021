/**
 * The request-size rule (pure), applied by the service after its bearer check and by the receiver
 * before reading a delivery: a body declared longer than the limit is refused with the error envelope
 * (413 VALIDATION_FAILED, details naming the limit) before a byte of it is read, and so is a body
 * without a Content-Length (chunked: 411), whose size could not be known first. Bun's own limit is
 * set out of reach, because Bun answers a bare 413 before any check — an unauthenticated client would
 * learn the size rule before being told it is unauthorised.
 */
import { AppError } from "../core/errors.ts";

/** Bun.serve's `maxRequestBodySize`: never reached (the checks below come first). */
export const BUN_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

export function bodySizeError(headers: Headers, maxBytes: number): AppError | null {
  const length = headers.get("content-length");
  if (length === null)
    return /chunked/i.test(headers.get("transfer-encoding") ?? "")
      ? new AppError(
          "VALIDATION_FAILED",
          "Send the body with a Content-Length (chunked bodies are not accepted).",
          { field: "content-length", reason: "missing", limit_bytes: maxBytes },
          { status: 411 },
        )
      : null;
  const n = Number(length);
  if (Number.isSafeInteger(n) && n >= 0 && n <= maxBytes) return null;
  return new AppError(
    "VALIDATION_FAILED",
    `The request body is larger than ${maxBytes} bytes.`,
    { field: "body", reason: "too large", limit_bytes: maxBytes },
    { status: 413 },
  );
}
