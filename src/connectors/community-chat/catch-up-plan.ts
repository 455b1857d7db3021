/**
 * Which channels a session catches up, and from where (pure). A channel gw has stored before starts
 * from its own position; one it has not starts from the connected mark (nothing, when there is no mark:
 * the first start imports no history). A channel whose `last_message_id` is not newer than where it
 * would start (or than the age bound) is quiet and costs no request; one the bot cannot read is not
 * asked at all. Floors never reach back past the age bound (GW_COMMUNITY_CATCHUP_MAX_AGE_HOURS).
 */
import type { ChannelRow } from "../../store/channels.ts";
import type { GuildChannelInfo } from "./guild-channels.ts";
import { CHANNEL_PREFIX, type ChannelKind, kindOfChannelId } from "./mapping.ts";
import { isLater, isSnowflake, later } from "./snowflake.ts";

export interface CatchUpTask {
  /** gw's channel id (`community_chat:…`). */
  channelId: string;
  kind: ChannelKind;
  discordChannelId: string;
  /** Fetch what is newer than this (the age bound still applies); null: only the age bound. */
  position: string | null;
}

/** A known channel's task, from its stored position (null for a row that is not a Discord channel). */
export function knownTask(row: ChannelRow): CatchUpTask | null {
  const kind = kindOfChannelId(row.id);
  return kind ? { channelId: row.id, kind, discordChannelId: row.platform_ref, position: row.cursor } : null;
}

/**
 * Where catch-up of channels gw has not stored yet starts: the stored connected mark; without one (a
 * gw that kept no mark yet), the newest position of any channel, which gw was connected to see; null
 * on a first start.
 */
export function startingMark(stored: string | null, rows: readonly ChannelRow[]): string | null {
  if (stored !== null) return stored;
  return rows.reduce<string | null>((a, r) => later(a, r.cursor), null);
}

/** Whether a channel whose newest message is `last` has anything after `from` (and the age bound). */
const hasNews = (last: string | null, from: string | null, ageFloor: string) =>
  last !== null && isLater(last, later(from, ageFloor) as string);

export interface GuildPlan {
  tasks: CatchUpTask[];
  /** Readable channels with nothing newer than their floor. */
  quiet: number;
  /** Channels the bot cannot read: never asked. */
  unreadable: number;
  /** gw ids of the known channels this guild accounted for (queued, quiet or unreadable). */
  covered: string[];
}

export function planGuild(q: {
  channels: readonly GuildChannelInfo[];
  /** Known channels by gw id, as they were when the session began. */
  known: ReadonlyMap<string, ChannelRow>;
  /** The connected mark at the session's start (null: first start). */
  since: string | null;
  ageFloor: string;
}): GuildPlan {
  const plan: GuildPlan = { tasks: [], quiet: 0, unreadable: 0, covered: [] };
  for (const c of q.channels) {
    const channelId = `${CHANNEL_PREFIX.channel}${c.id}`;
    const row = q.known.get(channelId);
    if (row) plan.covered.push(channelId);
    else if (q.since === null) continue;
    if (!c.readable) plan.unreadable += 1;
    else if (!hasNews(c.lastMessageId, row ? row.cursor : q.since, q.ageFloor)) plan.quiet += 1;
    else
      plan.tasks.push({
        channelId,
        kind: "channel",
        discordChannelId: c.id,
        position: row ? row.cursor : q.since,
      });
  }
  return plan;
}

export type DmPlan =
  | { what: "fetch"; task: CatchUpTask }
  /** A DM gw has stored before: the known channels' catch-up covers it. */
  | { what: "known"; discordChannelId: string }
  | { what: "quiet"; discordChannelId: string }
  /** The answer is not a DM channel. */
  | { what: "invalid" };

/** From the answer of POST /users/@me/channels (the DM channel with its `last_message_id`). */
export function planDm(q: {
  answer: unknown;
  known: ReadonlyMap<string, ChannelRow>;
  since: string | null;
  ageFloor: string;
}): DmPlan {
  const a = q.answer as { id?: unknown; type?: unknown; last_message_id?: unknown } | null;
  if (typeof a !== "object" || a === null || !isSnowflake(a.id) || a.type !== 1) return { what: "invalid" };
  const channelId = `${CHANNEL_PREFIX.dm}${a.id}`;
  if (q.known.has(channelId)) return { what: "known", discordChannelId: a.id };
  const last = isSnowflake(a.last_message_id) ? a.last_message_id : null;
  if (q.since === null || !hasNews(last, q.since, q.ageFloor))
    return { what: "quiet", discordChannelId: a.id };
  return { what: "fetch", task: { channelId, kind: "dm", discordChannelId: a.id, position: q.since } };
}
