/**
 * What a channel missed while gw was away (runner over REST). From the channel's stored position, or
 * from `maxAgeMs` ago when that is later, it pages forward through Discord's history (which answers
 * newest first) and returns at most `maxMessages` payloads, oldest first. Items that do not look like
 * messages are dropped; repeats are harmless (ingest dedupes on the snowflake). `truncated` is true only
 * when messages beyond the bound exist (a walk that fills the bound exactly asks for one more).
 */
import { asDiscordMessage, type DiscordMessage } from "./mapping.ts";
import { isLater, later, snowflakeAt } from "./snowflake.ts";

/** Discord's page size limit for channel history. */
export const HISTORY_PAGE = 100;

export interface MissedQuery {
  discordChannelId: string;
  /** The newest message id already processed in this channel, if any. */
  position: string | null;
  maxMessages: number;
  maxAgeMs: number;
  now: number;
}

export interface Missed {
  messages: DiscordMessage[];
  /** True when the bound stopped the walk before the end of the history. */
  truncated: boolean;
}

export async function fetchMissed(
  q: MissedQuery,
  history: (channelId: string, afterId: string, limit: number) => Promise<unknown[]>,
): Promise<Missed> {
  let after = later(q.position, snowflakeAt(q.now - q.maxAgeMs)) as string;
  const messages: DiscordMessage[] = [];
  while (messages.length < q.maxMessages) {
    const want = Math.min(HISTORY_PAGE, q.maxMessages - messages.length);
    const page = await history(q.discordChannelId, after, want);
    const fresh = page
      .map(asDiscordMessage)
      .filter((m): m is DiscordMessage => m !== null && isLater(m.id, after))
      .sort((a, b) => (isLater(a.id, b.id) ? 1 : -1));
    messages.push(...fresh);
    const last = fresh.at(-1);
    if (page.length < want || !last) return { messages, truncated: false };
    after = last.id;
  }
  const beyond = await history(q.discordChannelId, after, 1);
  const more = beyond.map(asDiscordMessage).some((m) => m !== null && isLater(m.id, after));
  return { messages, truncated: more };
}
