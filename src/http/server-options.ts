/**
 * What both HTTP servers (gw serve's API and gw receiver) hand to Bun.serve, whatever NODE_ENV says:
 * production mode (Bun's development error page would show a client our source lines), the body limit
 * out of Bun's reach (body-limit.ts), and a last-resort `error` handler for anything thrown outside the
 * routes' own error mapping: it logs the error and answers 500 INTERNAL_ERROR with the error envelope.
 * An answer given without reading the request's body (a refusal before the body, a route that takes
 * none) says `Connection: close`: Bun otherwise keeps that request pending while the client is still
 * sending, and a graceful stop then waits on it forever.
 */
import { AppError } from "../core/errors.ts";
import type { Logger } from "../core/ports.ts";
import { BUN_BODY_LIMIT } from "./body-limit.ts";

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

/** Whether a request came with a body that nothing has read (the answer must then close the connection). */
export function bodyUnread(req: Request): boolean {
  if (req.bodyUsed) return false;
  const length = req.headers.get("content-length");
  return req.headers.has("transfer-encoding") || (length !== null && length.trim() !== "0");
}
