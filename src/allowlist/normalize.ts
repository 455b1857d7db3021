/**
 * Sender-id normalisation (decisions.md), applied to allowlist ids and to incoming sender ids before
 * they are compared: e-mail addresses lower-cased; phone numbers without spaces, dashes, dots and
 * brackets. Community-chat ids (snowflakes) are only trimmed. Pure.
 */
import type { Source } from "../core/envelope.ts";

export function normalizeSenderId(source: Source, id: string): string {
  const trimmed = id.trim();
  if (source !== "device_messenger") return trimmed;
  if (trimmed.includes("@")) return trimmed.toLowerCase();
  return trimmed.replace(/[\s\-.()[\]]/g, "");
}
