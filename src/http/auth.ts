/**
 * Bearer check (pure). Compares SHA-256 digests of the presented and the expected token with
 * timingSafeEqual, so neither the content nor the length of the secret leaks through timing.
 * Accepts only the `Authorization: Bearer <token>` header (never a query parameter).
 */
import { createHash, timingSafeEqual } from "node:crypto";

export function createBearerCheck(expectedToken: string): (authorization: string | null) => boolean {
  const expected = digest(expectedToken);
  return (authorization) => {
    const m = authorization === null ? null : /^Bearer ([^\s]+)$/i.exec(authorization.trim());
    const given = digest(m?.[1] ?? "");
    return timingSafeEqual(given, expected) && m !== null;
  };
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s, "utf8").digest();
}
