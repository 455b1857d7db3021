/**
 * Maps everything a request can throw to the one error envelope. Elysia's own errors are translated
 * here: NOT_FOUND -> 404 NOT_FOUND, PARSE (malformed JSON) -> 422 VALIDATION_FAILED, and schema
 * failures -> VALIDATION_FAILED with `details.field` naming the failing field and the status the spec
 * picks for the route: 400 on the list endpoints, for send's attachment shapes and text length and an edit's,
 * 422 everywhere else. A response that fails its own schema is our bug: 500 INTERNAL_ERROR. A refusal that
 * asks the client to wait (429 RATE_LIMITED, 503 SERVICE_BUSY) carries `Retry-After` (retryAfterHeader).
 */
import { AppError, type ErrorCode, toAppError } from "../core/errors.ts";

const WAIT_CODES: ReadonlySet<ErrorCode> = new Set(["RATE_LIMITED", "SERVICE_BUSY"]);

/** The `Retry-After` value (whole seconds, at least 1) of an error that asks to wait, else null. Pure. */
export function retryAfterHeader(e: AppError): string | null {
  if (!WAIT_CODES.has(e.code)) return null;
  const s = Number(e.details.retry_after_s);
  return String(Number.isFinite(s) ? Math.max(1, Math.ceil(s)) : 1);
}

interface ValidationLike {
  type?: string;
  all?: { path?: string; message?: string }[];
  customError?: unknown;
}

const LIST_ROUTES = new Set([
  "GET /messages/unread",
  "GET /messages/quarantine",
  "GET /events",
  "GET /channels",
  "GET /messages/search",
]);

export function toHttpError(code: unknown, error: unknown, method: string, route: string): AppError {
  if (error instanceof AppError) return error;
  switch (code) {
    case "NOT_FOUND":
      return new AppError("NOT_FOUND", "No such route.", { method, path: route });
    case "PARSE":
      return new AppError("VALIDATION_FAILED", "The request body is not valid JSON.", {
        field: "body",
        reason: "malformed JSON",
      });
    case "VALIDATION":
      return validationError(error as ValidationLike, `${method} ${route}`);
    default:
      return toAppError(error);
  }
}

function validationError(e: ValidationLike, route: string): AppError {
  if (e.type === "response") return new AppError("INTERNAL_ERROR", "Internal error.", {}, { cause: e });
  const first = e.all?.[0];
  const fromPath = first?.path?.replace(/^\//, "").replaceAll("/", ".");
  const custom = typeof e.customError === "string" ? e.customError : undefined;
  const field = fromPath || custom || (e.type === "body" ? "body" : (e.type ?? "request"));
  const reason = first?.message ?? "invalid";
  const status =
    LIST_ROUTES.has(route) ||
    (route === "POST /messages/send" && isSendShapeRule(field, reason)) ||
    (route === "POST /messages/edit" && isTextLength(field, reason))
      ? 400
      : 422;
  return new AppError("VALIDATION_FAILED", `Invalid ${field}: ${reason}.`, { field, reason }, { status });
}

const isTextLength = (field: string, reason: string) => field === "text" && /length/.test(reason);

/**
 * Send's attachment shapes and its text length are 400 (spec E, decisions.md), as is an edit's text length
 * (extensions.md §2); other body faults 422.
 */
function isSendShapeRule(field: string, reason: string): boolean {
  return field.startsWith("attachments") || field === "idempotency-key" || isTextLength(field, reason);
}
