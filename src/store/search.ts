/**
 * Search read model over the index of migration-search.ts (visible messages only, so nothing else can be
 * found). Answer: best bm25 match first, ties newest first, among the newest RANK_WINDOW matches. bm25
 * counts every row holding each ranked word, so a word in more than COMMON_WORD_ROWS messages filters
 * but does not rank (like a stop word); with no ranking word the matches come newest first. Statements
 * are prepared once; a request costs one bounded count per ranking word and one query.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";
import type { MessageRow } from "./messages.ts";
import { bodyWord, matchExpression, rankExpression, searchWords } from "./search-query.ts";

/** A word found in more rows than this does not rank (counting its rows would cost too much). */
export const COMMON_WORD_ROWS = 10_000;
/** How many of the newest matches are ranked. */
export const RANK_WINDOW = 500;
/** Only the first words of a query are counted (and can rank); every word must still match. */
export const MAX_RANKED_WORDS = 8;

export interface SearchRequest {
  q: string;
  source: Source | null;
  channelId: string | null;
  limit: number;
}

/** Rows found for `$match`, ranked by bm25 over `$rank`. Exported for the plan tests. */
export const RANKED_SQL = `
  WITH candidates(row) AS MATERIALIZED (
    SELECT rowid FROM message_search WHERE message_search MATCH $match ORDER BY rowid LIMIT $window),
  ranked(score, ts, id) AS (
    SELECT bm25(message_search), r.message_ts, r.message_id
    FROM message_search CROSS JOIN message_search_rows r ON r.row = message_search.rowid
    WHERE message_search MATCH $rank AND message_search.rowid <= (SELECT max(row) FROM candidates)
      AND +message_search.rowid IN (SELECT row FROM candidates)
    ORDER BY 1, 2 DESC, 3 DESC LIMIT $limit)
  SELECT m.* FROM ranked CROSS JOIN messages m ON m.id = ranked.id
  ORDER BY ranked.score, ranked.ts DESC, ranked.id DESC`;

/** Rows found for `$match`, newest first (no word ranks). Exported for the plan tests. */
export const NEWEST_SQL = `
  WITH newest(ts, id) AS (
    SELECT r.message_ts, r.message_id
    FROM (SELECT rowid AS row FROM message_search WHERE message_search MATCH $match ORDER BY rowid LIMIT $window) c
    CROSS JOIN message_search_rows r ON r.row = c.row
    ORDER BY 1 DESC, 2 DESC LIMIT $limit)
  SELECT m.* FROM newest CROSS JOIN messages m ON m.id = newest.id ORDER BY newest.ts DESC, newest.id DESC`;

const COUNT_SQL = `
  SELECT count(*) AS n FROM (SELECT 1 FROM message_search WHERE message_search MATCH ?1 LIMIT ?2)`;

export function createSearchStore(db: Database) {
  const ranked = db.prepare<MessageRow, [Record<string, string | number>]>(RANKED_SQL);
  const newest = db.prepare<MessageRow, [Record<string, string | number>]>(NEWEST_SQL);
  const count = db.prepare<{ n: number }, [string, number]>(COUNT_SQL);
  /**
   * The words that rank: among the first MAX_RANKED_WORDS, those in at most COMMON_WORD_ROWS rows; null
   * when one of them is in none (nothing can match).
   */
  const rankingWords = (words: readonly string[]): string[] | null => {
    const ranking: string[] = [];
    for (const w of words.slice(0, MAX_RANKED_WORDS)) {
      const n = count.get(bodyWord(w), COMMON_WORD_ROWS + 1)?.n ?? 0;
      if (n === 0) return null;
      if (n <= COMMON_WORD_ROWS) ranking.push(w);
    }
    return ranking;
  };

  return {
    /** Visible messages matching every word of `q` (and the filters), best first; none when q has no word. */
    search(r: SearchRequest): MessageRow[] {
      const words = searchWords(r.q);
      if (words.length === 0) return [];
      const ranking = rankingWords(words);
      if (ranking === null) return [];
      const match = matchExpression(words, { source: r.source, channelId: r.channelId });
      const rank = rankExpression(ranking);
      const params = { match, window: RANK_WINDOW, limit: r.limit };
      return rank === "" ? newest.all(params) : ranked.all({ ...params, rank });
    },
  };
}

export type SearchStore = ReturnType<typeof createSearchStore>;
