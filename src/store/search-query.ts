/**
 * The search query builder (pure): `q` is words, never FTS5 syntax. A word is a run of letters, numbers and
 * combining marks with at least one letter or number; anything else (quotes, `*`, `-`, `^`, `:`, brackets,
 * emoji, controls) only separates words, and AND, OR, NOT, NEAR are plain words. Each word is one quoted
 * FTS5 string matched as a whole token of the message text (no prefix matching); every word must match.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const HAS_LETTER_OR_NUMBER = /[\p{L}\p{N}]/u;

/** How two words compare for the index (unicode61, remove_diacritics 2): case and accents folded. */
export function foldKey(word: string): string {
  return word.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

/** The distinct words of `q` in order of first appearance (NFC; duplicates by case or accent dropped). */
export function searchWords(q: string): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const [raw] of q.normalize("NFC").matchAll(WORD)) {
    if (!HAS_LETTER_OR_NUMBER.test(raw)) continue;
    const key = foldKey(raw);
    if (key === "" || seen.has(key)) continue;
    seen.add(key);
    words.push(raw);
  }
  return words;
}

/** An FTS5 string literal: the text in double quotes, each `"` doubled. Never an operator. */
export function ftsString(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/** The word as one token of the message text (the `body` column). */
export const bodyWord = (word: string): string => `body : ${ftsString(word)}`;

const hexOf = (text: string): string => Buffer.from(text, "utf8").toString("hex").toUpperCase();

/**
 * The index's tag tokens (column `tags`): `c` + the channel id's UTF-8 bytes in hex, `s` + the source's;
 * one token each, so a filter matches exactly that channel or source. The index writes them in SQL as
 * `'c' || hex(channel_id)` (search-index.ts, migration-search.ts).
 */
export const channelTag = (channelId: string): string => `c${hexOf(channelId)}`;
export const sourceTag = (source: string): string => `s${hexOf(source)}`;

export interface SearchFilter {
  source: string | null;
  channelId: string | null;
}

/** Every word AND the filters' tags: the rows that answer the query. Empty words: "" (nothing to match). */
export function matchExpression(words: readonly string[], filter: SearchFilter): string {
  if (words.length === 0) return "";
  const terms = words.map(bodyWord);
  if (filter.channelId !== null) terms.push(`tags : ${ftsString(channelTag(filter.channelId))}`);
  if (filter.source !== null) terms.push(`tags : ${ftsString(sourceTag(filter.source))}`);
  return terms.join(" AND ");
}

/** The words that rank (bm25), as one AND expression; "" when none does. */
export function rankExpression(words: readonly string[]): string {
  return words.map(bodyWord).join(" AND ");
}
