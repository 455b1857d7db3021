/**
 * What counts as a reaction emoji (pure): one Unicode emoji, or Discord's custom `<:name:id>` /
 * `<a:name:id>`. POST /messages/react refuses anything else, and GW_RECEIVER_ACK_EMOJI is checked the same
 * way at start-up.
 */

const UNICODE_EMOJI = /^(?:\p{RGI_Emoji}|\p{Extended_Pictographic}\uFE0F?)$/v;
const CUSTOM_EMOJI = /^<a?:\w{2,32}:\d{1,20}>$/;

/** A Unicode emoji, or Discord's `<:name:id>` / `<a:name:id>`. */
export function isReactionEmoji(emoji: string): boolean {
  return UNICODE_EMOJI.test(emoji) || CUSTOM_EMOJI.test(emoji);
}
