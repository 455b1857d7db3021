/**
 * What a channel missed while gw was away (runner over REST): the messages newer than its stored position, or
 * than `maxAgeMs` ago when that is later, at most the newest `maxMessages`, oldest first; past the bound an
 * agent sees the conversation as it stands. Items that do not look like messages are dropped; repeats are
 * harmless (ingest dedupes on the snowflake).
 */
import { asDiscordMessage, type DiscordMessage } from "./mapping.ts";
import { isLater, later, snowflakeAt } from "./snowflake.ts";

/** Discord's page size limit for channel history. */
export const HISTORY_PAGE = 100;
/** Pages asked only to count what the bound skipped (at most this many more requests per channel). */
export const SKIP_COUNT_PAGES = 5;

export interface MissedQuery {
  discordChannelId: string;
  /** The newest message id already processed in this channel (or where it starts), if any. */
  position: string | null;
  maxMessages: number;
  maxAgeMs: number;
  now: number;
}

export interface Missed {
  /** At most `maxMessages`, oldest first. */
  messages: DiscordMessage[];
  /** Missed messages older than those kept (within the age bound). */
  skipped: number;
  /** True when `skipped` is only a lower bound. */
  skippedAtLeast: boolean;
}

/** One page of history, newest first: the newest `limit` messages, or those right before `before`. */
export type HistoryPage = (channelId: string, q: { before?: string; limit: number }) => Promise<unknown[]>;

/**
 * Pages back from the newest message (Discord answers newest first; `before` never shifts under new posts).
 * The older ones are counted as skipped, paging on for at most SKIP_COUNT_PAGES more pages.
 */
export async function fetchMissed(q: MissedQuery, history: HistoryPage): Promise<Missed> {
  const floor = later(q.position, snowflakeAt(q.now - q.maxAgeMs)) as string;
  const kept: DiscordMessage[] = [];
  let skipped = 0;
  let before: string | undefined;
  const done = (skippedAtLeast: boolean): Missed => ({ messages: kept.reverse(), skipped, skippedAtLeast });
  for (let counting = 0; ; ) {
    const full = kept.length >= q.maxMessages;
    if (full && counting++ >= SKIP_COUNT_PAGES) return done(true);
    let page: unknown[];
    try {
      page = await history(q.discordChannelId, { ...(before ? { before } : {}), limit: HISTORY_PAGE });
    } catch (err) {
      if (full) return done(true);
      throw err;
    }
    const items = page
      .map(asDiscordMessage)
      .filter((m): m is DiscordMessage => m !== null && (before === undefined || isLater(before, m.id)))
      .sort((a, b) => (isLater(a.id, b.id) ? -1 : 1));
    for (const m of items) {
      if (!isLater(m.id, floor)) return done(false);
      if (kept.length < q.maxMessages) kept.push(m);
      else skipped += 1;
    }
    const oldest = items.at(-1);
    if (page.length < HISTORY_PAGE || !oldest) return done(false);
    before = oldest.id;
  }
}
