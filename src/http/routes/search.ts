/**
 * GET /messages/search (extensions.md §2): full-text search over visible messages, best match first, as
 * Envelopes built exactly as the other reading routes build them. Bearer and X-Agent-ID ran in app.ts;
 * a bad query is 400 VALIDATION_FAILED naming the field; a `q` without words answers `{messages: []}`.
 */
import { Elysia } from "elysia";
import type { Store } from "../../store/store.ts";
import { errorResponses, SearchQuery, SearchResponse } from "../schemas.ts";
import { envelopes, json } from "./messages.ts";

export const SEARCH_LIMIT_DEFAULT = 20;

export interface SearchRouteDeps {
  store: Store;
  /** Base of adapter-hosted attachment URLs, e.g. http://127.0.0.1:8080. */
  publicBaseUrl: string;
}

export function searchRoutes(deps: SearchRouteDeps) {
  return new Elysia({ name: "search" }).get(
    "/messages/search",
    ({ query }) => {
      const rows = deps.store.search.search({
        q: query.q,
        source: query.source ?? null,
        channelId: query.channel_id ?? null,
        limit: query.limit ?? SEARCH_LIMIT_DEFAULT,
      });
      return json(`{"messages":${envelopes(deps, rows)}}`);
    },
    {
      query: SearchQuery,
      response: { 200: SearchResponse, ...errorResponses(400, 401) },
      detail: {
        summary: "Search messages",
        description:
          "Full-text search (SQLite FTS5) over the current text of visible messages (allowlisted and outbound; " +
          "never quarantined or deleted ones): messages holding every word of `q` as a whole word, best match " +
          "(bm25) first, ties newest first. Matches are looked for from the newest message back to where the " +
          "query's rarest word (or its channel) has occurred 1,000 times, all history when one is rarer; the " +
          "newest 200 are ranked; a word found in more than 10,000 messages narrows the search but does not " +
          "rank, and when no word ranks the matches come newest first.",
      },
    },
  );
}
