/**
 * Webhook signatures (pure). `X-GW-Signature: sha256=<hex>` is HMAC-SHA256 over the exact body bytes
 * keyed by GW_WEBHOOK_SECRET (GitHub's scheme). The Standard Webhooks headers sign `id.timestamp.body`
 * with the same secret: its UTF-8 bytes, or — for a `whsec_`-prefixed secret, as Standard Webhooks
 * libraries expect — the base64 bytes after the prefix. Verification compares in constant time.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export interface SignedHeaders {
  "content-type": "application/json";
  "x-gw-signature": string;
  "x-gw-delivery-id": string;
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export function gwSignature(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export function standardWebhooksKey(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8");
}

export function standardSignature(
  secret: string,
  id: string,
  timestampS: number | string,
  body: string | Uint8Array,
): string {
  const mac = createHmac("sha256", standardWebhooksKey(secret))
    .update(`${id}.${timestampS}.`)
    .update(body)
    .digest("base64");
  return `v1,${mac}`;
}

export function signedHeaders(
  secret: string,
  deliveryId: string,
  timestampS: number,
  body: string,
): SignedHeaders {
  return {
    "content-type": "application/json",
    "x-gw-signature": gwSignature(secret, body),
    "x-gw-delivery-id": deliveryId,
    "webhook-id": deliveryId,
    "webhook-timestamp": String(timestampS),
    "webhook-signature": standardSignature(secret, deliveryId, timestampS, body),
  };
}

/** Constant-time check of an `X-GW-Signature` value against the raw body bytes. */
export function verifyGwSignature(secret: string, body: string | Uint8Array, header: string | null): boolean {
  const expected = Buffer.from(gwSignature(secret, body));
  const given = Buffer.from(header ?? "");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Constant-time check of a `webhook-signature` header (space-separated `v1,<base64>` entries). */
export function verifyStandardSignature(
  secret: string,
  id: string,
  timestampS: string,
  body: Uint8Array,
  header: string,
): boolean {
  const expected = Buffer.from(standardSignature(secret, id, timestampS, body));
  return header
    .split(" ")
    .map((entry) => Buffer.from(entry))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
}

/** Header naming a signed test delivery (`gw doctor`); gw receiver verifies it and runs nothing. */
export const EVENT_HEADER = "x-gw-event";
export const PING_EVENT = "ping";

/** A signed test delivery: the real signature headers over a small non-envelope body. Pure. */
export function pingDelivery(secret: string, deliveryId: string, timestampS: number) {
  const body = JSON.stringify({ event: PING_EVENT, sent_at: new Date(timestampS * 1000).toISOString() });
  return {
    body,
    headers: { ...signedHeaders(secret, deliveryId, timestampS, body), [EVENT_HEADER]: PING_EVENT },
  };
}
