/**
 * What every error answer must look like (spec "Errors", decisions.md): `{error: {code, message,
 * details}}` and nothing else, a documented code (the spec's table plus NOT_FOUND), and a status that
 * belongs to that code. VALIDATION_FAILED is 400 or 422 by the spec, and 413/411 for the request-size
 * rule (core/http-edge.ts); RECEIVER_BUSY 503 is the receiver's full queue or its shutdown, SERVICE_BUSY 503
 * a full long-poll table. No answer ever carries
 * CORS headers (reliability.md §4).
 */

export const STATUSES_OF_CODE: Record<string, readonly number[]> = {
  UNAUTHORIZED: [401],
  AGENT_ID_REQUIRED: [400],
  VALIDATION_FAILED: [400, 411, 413, 422],
  IDEMPOTENCY_KEY_REUSE: [422],
  RATE_LIMITED: [429],
  MESSAGE_NOT_FOUND: [404],
  CHANNEL_NOT_FOUND: [404],
  ATTACHMENT_TOO_LARGE_FOR_PLATFORM: [413],
  PLATFORM_AUTH: [502],
  PLATFORM_SEND_FAILED: [502],
  INTERNAL_ERROR: [500],
  NOT_FOUND: [404],
  RECEIVER_BUSY: [503],
  SERVICE_BUSY: [503],
};

/** The problem with one answer, or null when it is acceptable. `method` HEAD answers have no body. */
export function answerProblem(
  status: number,
  headers: Headers,
  bodyText: string,
  method: string,
  opts: { allow5xx?: boolean } = {},
): string | null {
  for (const [k] of headers) if (k.toLowerCase().startsWith("access-control-")) return `CORS header ${k}`;
  if (status >= 500 && !opts.allow5xx) return `a ${status} answer: ${bodyText.slice(0, 300)}`;
  if (status >= 200 && status < 300) return null;
  if (method === "HEAD") return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    return `status ${status} with a body that is not JSON: ${JSON.stringify(bodyText.slice(0, 200))}`;
  }
  const problem = envelopeProblem(parsed);
  if (problem) return `status ${status}: ${problem}: ${bodyText.slice(0, 300)}`;
  const code = (parsed as { error: { code: string } }).error.code;
  if (!STATUSES_OF_CODE[code]?.includes(status)) return `status ${status} does not belong to code ${code}`;
  if (status === 429 && !/^[1-9]\d*$/.test(headers.get("retry-after") ?? ""))
    return `429 without an integer Retry-After >= 1 (${headers.get("retry-after")})`;
  return null;
}

/** Why a parsed body is not the error envelope, or null. */
export function envelopeProblem(v: unknown): string | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "not an object";
  const keys = Object.keys(v);
  if (keys.length !== 1 || keys[0] !== "error") return `top-level keys ${JSON.stringify(keys)}`;
  const e = (v as { error: unknown }).error;
  if (typeof e !== "object" || e === null || Array.isArray(e)) return "error is not an object";
  const { code, message, details } = e as Record<string, unknown>;
  if (typeof code !== "string" || !(code in STATUSES_OF_CODE)) return `undocumented code ${String(code)}`;
  if (typeof message !== "string" || message === "") return "message is not a non-empty string";
  if (typeof details !== "object" || details === null || Array.isArray(details))
    return "details is not an object";
  return null;
}
