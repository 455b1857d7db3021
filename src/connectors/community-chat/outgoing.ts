/**
 * What gw POSTs to Discord for one send (pure): text longer than MAX_MESSAGE_UNITS split into consecutive
 * posts, only the first of which replies. Every part carries `allowed_mentions: {parse: []}` (an agent's text
 * never pings anyone) and a nonce derived from gw's send id and the part's index with `enforce_nonce`, so a
 * transport retry can never post a part twice.
 */
import { createHash } from "node:crypto";

export const MAX_MESSAGE_UNITS = 2000;
/** Discord's nonce is at most 25 characters. */
const NONCE_CHARS = 25;

/**
 * Counted in UTF-16 units, as Discord counts. Cuts at the last line break that fits, else the last
 * whitespace, else hard, never halving a surrogate pair; the separator at a cut is dropped and
 * whitespace-only parts are not sent.
 */
export function splitText(text: string, max = MAX_MESSAGE_UNITS): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max + 1);
    let cut = window.lastIndexOf("\n", max);
    if (cut <= 0) cut = lastWhitespace(window, max);
    if (cut <= 0) {
      const hard = isHighSurrogate(rest.charCodeAt(max - 1)) ? max - 1 : max;
      parts.push(rest.slice(0, hard));
      rest = rest.slice(hard);
      continue;
    }
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut + 1);
  }
  parts.push(rest);
  return parts.filter((p) => p.trim() !== "");
}

function lastWhitespace(s: string, max: number): number {
  for (let i = Math.min(max, s.length - 1); i > 0; i--) if (/\s/.test(s[i] as string)) return i;
  return -1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function nonceFor(sendId: string, part: number): string {
  return createHash("sha256").update(`${sendId}:${part}`).digest("base64url").slice(0, NONCE_CHARS);
}

export interface MessageBody {
  content: string;
  nonce: string;
  enforce_nonce: true;
  allowed_mentions: { parse: [] };
  message_reference?: { message_id: string; fail_if_not_exists: false };
}

export function messageBodies(sendId: string, text: string, replyToPlatformId: string | null): MessageBody[] {
  return splitText(text).map((content, i) => ({
    content,
    nonce: nonceFor(sendId, i),
    enforce_nonce: true,
    allowed_mentions: { parse: [] },
    ...(i === 0 && replyToPlatformId
      ? { message_reference: { message_id: replyToPlatformId, fail_if_not_exists: false } }
      : {}),
  }));
}
