/**
 * The bounded counts a search makes before its query (search.ts): for a word or the channel, how many
 * rows hold it among the newest SCAN_OCCURRENCES and where the last of those is; for a word seen that
 * often, whether it is in more than COMMON_WORD_ROWS rows (remembered: a common word stays common).
 * Each count reads at most that many index entries, so a request's cost is bounded whatever it asks.
 */
import type { Database } from "bun:sqlite";
import { foldKey } from "./search-query.ts";

/** Matches are looked for back to where the query's rarest term has occurred this many times. */
export const SCAN_OCCURRENCES = 1_000;
/** A word found in more rows than this does not rank (bm25 would count all its rows each time). */
export const COMMON_WORD_ROWS = 10_000;
/** How many common words are remembered; the memory is emptied when full. */
const COMMON_MEMORY = 4_096;

export interface Probe {
  /** No row holds it: nothing can match. */
  absent: boolean;
  /** Lowest index row to scan for it: 0 (all of them) when it occurs fewer than SCAN_OCCURRENCES times. */
  from: number;
}

export function createSearchProbes(db: Database) {
  const newest = db.prepare<{ n: number; low: number | null }, [string, number]>(`
    SELECT count(*) AS n, min(r) AS low FROM (
      SELECT rowid AS r FROM message_search WHERE message_search MATCH ?1 ORDER BY rowid DESC LIMIT ?2)`);
  const count = db.prepare<{ n: number }, [string, number]>(`
    SELECT count(*) AS n FROM (SELECT 1 FROM message_search WHERE message_search MATCH ?1 LIMIT ?2)`);
  const common = new Set<string>();

  return {
    /** Where the newest SCAN_OCCURRENCES rows matching `term` (an FTS5 expression) begin. */
    probe(term: string): Probe {
      const { n, low } = newest.get(term, SCAN_OCCURRENCES) ?? { n: 0, low: null };
      return { absent: n === 0, from: n < SCAN_OCCURRENCES ? 0 : (low ?? 0) };
    },
    /** Whether `word` (its FTS5 term `term`), seen SCAN_OCCURRENCES times already, may rank. */
    ranks(word: string, term: string, probe: Probe): boolean {
      if (probe.from === 0) return true;
      const key = foldKey(word);
      if (common.has(key)) return false;
      if ((count.get(term, COMMON_WORD_ROWS + 1)?.n ?? 0) <= COMMON_WORD_ROWS) return true;
      if (common.size >= COMMON_MEMORY) common.clear();
      common.add(key);
      return false;
    },
  };
}
