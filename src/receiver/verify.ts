/**
 * What makes a delivery acceptable (pure; spec I, decisions.md): an `X-GW-Signature` over the exact
 * body bytes (missing: 400; wrong: 401) and an `X-GW-Delivery-Id` (missing: 400). When any Standard
 * Webhooks header is present, all three must be, `webhook-id` must equal the delivery id (a replay
 * under a changed id is refused), the timestamp must be within TIMESTAMP_TOLERANCE_S of now and
 * `webhook-signature` must match: otherwise 401. Every comparison is constant-time.
 */
import { AppError } from "../core/errors.ts";
import { verifyGwSignature, verifyStandardSignature } from "../webhooks/sign.ts";

export const TIMESTAMP_TOLERANCE_S = 300;

export type Verdict = { ok: true; deliveryId: string } | { ok: false; error: AppError };

const missing = (header: string): Verdict => ({
  ok: false,
  error: new AppError(
    "VALIDATION_FAILED",
    `The ${header} header is missing.`,
    { field: header },
    { status: 400 },
  ),
});
const refused = (message: string, details: Record<string, unknown> = {}): Verdict => ({
  ok: false,
  error: new AppError("UNAUTHORIZED", message, details),
});

export function verifyDelivery(secret: string, headers: Headers, body: Uint8Array, nowS: number): Verdict {
  const signature = headers.get("x-gw-signature");
  if (!signature) return missing("X-GW-Signature");
  const deliveryId = headers.get("x-gw-delivery-id");
  if (!deliveryId) return missing("X-GW-Delivery-Id");
  if (!verifyGwSignature(secret, body, signature)) return refused("The signature does not match the body.");

  const id = headers.get("webhook-id");
  const timestamp = headers.get("webhook-timestamp");
  const standard = headers.get("webhook-signature");
  if (id === null && timestamp === null && standard === null) return { ok: true, deliveryId };
  if (id === null || timestamp === null || standard === null)
    return refused(
      "Standard Webhooks headers must come together (webhook-id, webhook-timestamp, webhook-signature).",
    );
  if (id !== deliveryId) return refused("webhook-id differs from X-GW-Delivery-Id.");
  const ts = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : Number.NaN;
  if (!(Math.abs(nowS - ts) <= TIMESTAMP_TOLERANCE_S))
    return refused("The delivery's timestamp is too far from now (replayed, or a clock is wrong).", {
      tolerance_s: TIMESTAMP_TOLERANCE_S,
    });
  if (!verifyStandardSignature(secret, id, timestamp, body, standard))
    return refused("webhook-signature does not match.");
  return { ok: true, deliveryId };
}
