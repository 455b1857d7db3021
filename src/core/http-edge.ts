/**
 * The HTTP edge both servers share (gw serve's API and gw receiver), apart from either: the path of a request
 * as the router slices it, the body size rule, Bun.serve's options and `bodyUnread`. The size rule is applied
 * before a byte of the body is read, and an answer given without reading the body must close the connection.
 */
import { AppError } from "./errors.ts";
import type { Logger } from "./ports.ts";

/** `host:port` for a URL, an IPv6 address in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

/** The path of a request URL, sliced as Elysia's router slices it (no URL object per request). */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return url.slice(start, query < 0 ? undefined : query);
}

/**
 * Bun.serve's `maxRequestBodySize`: never reached (the checks below come first), so an unauthenticated
 * client never learns the rule from Bun first.
 */
export const BUN_BODY_LIMIT = Number.MAX_SAFE_INTEGER;

/**
 * The size rule, before a byte of the body is read: a body declared over the limit is 413 VALIDATION_FAILED
 * naming it; a chunked body without Content-Length is 411.
 */
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

/**
 * Production mode (Bun's development error page would show our source lines) and a last-resort `error`
 * handler answering 500 INTERNAL_ERROR with the envelope.
 */
export function bunServeOptions(log: Logger) {
  return {
    development: false,
    maxRequestBodySize: BUN_BODY_LIMIT,
    error(err: Error): Response {
      log.error({ err }, "request failed outside the error mapper");
      const e = new AppError("INTERNAL_ERROR", "Internal error.", {});
      return Response.json(e.toEnvelope(), { status: e.status });
    },
  };
}

/**
 * Whether a request came with a body that nothing has read. The answer must then say `Connection: close`:
 * Bun otherwise keeps that request pending while the client still sends, and a graceful stop waits on it
 * forever.
 */
export function bodyUnread(req: Request): boolean {
  if (req.bodyUsed) return false;
  const length = req.headers.get("content-length");
  return req.headers.has("transfer-encoding") || (length !== null && length.trim() !== "0");
}
