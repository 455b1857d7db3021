/**
 * Search read model over the index of migration-search.ts (visible messages only, so nothing else can be
 * found). Bounded work per request: matches are looked for from the newest row back to where the query's
 * rarest word (or its channel) has occurred SCAN_OCCURRENCES times (all history when one is rarer); the
 * newest RANK_WINDOW of them are ranked by bm25 over the words in at most COMMON_WORD_ROWS rows, ties
 * newest first; when no word ranks, newest first. Statements are prepared once (search-probe.ts counts).
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";
import type { MessageRow } from "./messages.ts";
import { createSearchProbes } from "./search-probe.ts";
import {
  bodyWord,
  channelTag,
  ftsString,
  matchExpression,
  rankExpression,
  searchWords,
} from "./search-query.ts";

/** How many of the newest matches are ranked. */
export const RANK_WINDOW = 200;
/** Only the first words of a query are counted (and can rank or bound the scan); all must match. */
export const MAX_PROBED_WORDS = 8;

export interface SearchRequest {
  q: string;
  source: Source | null;
  channelId: string | null;
  limit: number;
}

/** The newest RANK_WINDOW rows matching `$match` from row `$from` on (scanned upwards: FTS5's fast way). */
const WINDOW_CTE = `
  found(row) AS MATERIALIZED (
    SELECT rowid FROM message_search WHERE message_search MATCH $match AND rowid >= $from),
  win(row) AS MATERIALIZED (SELECT row FROM found ORDER BY row DESC LIMIT $window)`;

/** The window ranked by bm25 over `$rank`, ties newest first. Exported for the plan tests. */
export const RANKED_SQL = `
  WITH ${WINDOW_CTE},
  ranked(score, ts, id) AS (
    SELECT bm25(message_search), r.message_ts, r.message_id
    FROM message_search CROSS JOIN message_search_rows r ON r.row = message_search.rowid
    WHERE message_search MATCH $rank AND message_search.rowid >= (SELECT min(row) FROM win)
      AND +message_search.rowid IN (SELECT row FROM win)
    ORDER BY 1, 2 DESC, 3 DESC LIMIT $limit)
  SELECT m.* FROM ranked CROSS JOIN messages m ON m.id = ranked.id
  ORDER BY ranked.score, ranked.ts DESC, ranked.id DESC`;

/** The window newest first (no word ranks). Exported for the plan tests. */
export const NEWEST_SQL = `
  WITH ${WINDOW_CTE},
  newest(ts, id) AS (
    SELECT r.message_ts, r.message_id FROM win CROSS JOIN message_search_rows r ON r.row = win.row
    ORDER BY 1 DESC, 2 DESC LIMIT $limit)
  SELECT m.* FROM newest CROSS JOIN messages m ON m.id = newest.id ORDER BY newest.ts DESC, newest.id DESC`;

type Params = Record<string, string | number>;

export function createSearchStore(db: Database) {
  const ranked = db.prepare<MessageRow, [Params]>(RANKED_SQL);
  const newest = db.prepare<MessageRow, [Params]>(NEWEST_SQL);
  const probes = createSearchProbes(db);

  /** The ranking words and the lowest row to scan; null when a word or the channel is in no row. */
  const plan = (words: readonly string[], channelId: string | null) => {
    let from = Number.MAX_SAFE_INTEGER;
    const ranking: string[] = [];
    for (const w of words.slice(0, MAX_PROBED_WORDS)) {
      const p = probes.probe(bodyWord(w));
      if (p.absent) return null;
      from = Math.min(from, p.from);
      if (probes.ranks(w, bodyWord(w), p)) ranking.push(w);
    }
    if (channelId !== null) {
      const p = probes.probe(`tags : ${ftsString(channelTag(channelId))}`);
      if (p.absent) return null;
      from = Math.min(from, p.from);
    }
    return { ranking, from };
  };

  return {
    /** Visible messages matching every word of `q` (and the filters), best first; none when q has no word. */
    search(r: SearchRequest): MessageRow[] {
      const words = searchWords(r.q);
      if (words.length === 0) return [];
      const p = plan(words, r.channelId);
      if (p === null) return [];
      const match = matchExpression(words, { source: r.source, channelId: r.channelId });
      const params = { match, from: p.from, window: RANK_WINDOW, limit: r.limit };
      const rank = rankExpression(p.ranking);
      return rank === "" ? newest.all(params) : ranked.all({ ...params, rank });
    },
  };
}

export type SearchStore = ReturnType<typeof createSearchStore>;
