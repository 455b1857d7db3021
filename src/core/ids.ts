/**
 * Identifiers. Message and attachment ids are a prefix plus a monotonic ULID (26 Crockford base32
 * characters), so ids created later sort later, even within one millisecond. Delivery ids are
 * UUIDv7: time-ordered, so the deliveries table grows at its end (random UUIDv4 keys made every
 * ingest insert land on a random page: ingest ran 2.5× slower). A factory is built per process by the
 * composition root; there is no module-level state.
 */
import { monotonicFactory } from "ulid";
import type { Clock } from "./ports.ts";

export const MESSAGE_ID_PATTERN = "^msg_[0-9A-HJKMNP-TV-Z]{26}$";
export const ATTACHMENT_ID_PATTERN = "^att_[0-9A-HJKMNP-TV-Z]{26}$";
export const EVENT_ID_PATTERN = "^evt_[0-9A-HJKMNP-TV-Z]{26}$";
export const MESSAGE_ID_RE = new RegExp(MESSAGE_ID_PATTERN);
export const ATTACHMENT_ID_RE = new RegExp(ATTACHMENT_ID_PATTERN);

export interface IdFactory {
  message(): string;
  attachment(): string;
  delivery(): string;
  /** Event ids ascend in the order gw stores events (one writer, ids made inside its transaction). */
  event(): string;
}

export function createIdFactory(clock: Clock): IdFactory {
  const next = monotonicFactory();
  return {
    message: () => `msg_${next(clock.now())}`,
    attachment: () => `att_${next(clock.now())}`,
    delivery: () => Bun.randomUUIDv7(undefined, clock.now()),
    event: () => `evt_${next(clock.now())}`,
  };
}
