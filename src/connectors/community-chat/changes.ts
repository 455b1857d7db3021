/**
 * Discord dispatches that change stored messages, mapped to changes (pure; extensions.md §1): a
 * MESSAGE_UPDATE carrying content is an edit (ingest drops one that changed nothing), MESSAGE_DELETE and
 * each id of MESSAGE_DELETE_BULK a delete, MESSAGE_REACTION_ADD/_REMOVE a reaction. A payload without the
 * fields gw reads, or with wrong types, maps to nothing. Each comes with gw's channel, for its queue.
 */
import type { NormalizedChange } from "../../ingest/changes.ts";
import { type ChannelKind, channelFor } from "./mapping.ts";

export type ChangeDispatch = "update" | "delete" | "delete_bulk" | "reaction_add" | "reaction_remove";

export interface MappedChanges {
  channelId: string;
  changes: NormalizedChange[];
}

const SNOWFLAKE = /^\d{1,20}$/;
const isSnowflake = (v: unknown): v is string => typeof v === "string" && SNOWFLAKE.test(v);
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** Unicode, or Discord's custom form `<:name:id>` (`<a:name:id>` when animated). */
export function emojiOf(e: unknown): string | null {
  if (!isRecord(e)) return null;
  if (e.id === null || e.id === undefined) return str(e.name) ?? null;
  if (!isSnowflake(e.id)) return null;
  return `<${e.animated === true ? "a" : ""}:${str(e.name) ?? "_"}:${e.id}>`;
}

/**
 * The reactor's name as Discord shows it: the member's nick, the user's global name or username; in a DM
 * (no member), the name their messages carried (`known`), else the id.
 */
function reactorName(
  d: Record<string, unknown>,
  userId: string,
  known: (id: string) => string | null,
): string {
  const member = isRecord(d.member) ? d.member : {};
  const user = isRecord(member.user) ? member.user : {};
  return str(member.nick) ?? str(user.global_name) ?? str(user.username) ?? known(userId) ?? userId;
}

/** gw's channel of a dispatch: a guild's, a group DM's (known from its messages) or a one-to-one DM's. */
function channelOf(d: Record<string, unknown>, isGroupDm: (id: string) => boolean): string | null {
  if (!isSnowflake(d.channel_id)) return null;
  const kind: ChannelKind = isSnowflake(d.guild_id) || isGroupDm(d.channel_id) ? "channel" : "dm";
  return channelFor(kind, d.channel_id).id;
}

/**
 * An edit's key: the message, Discord's `edited_timestamp` and a hash of the new content — the same in
 * the REST answer and the echo, and distinct for two edits stamped alike (a replayed dispatch repeats all
 * three; two edits in one millisecond differ in content).
 */
export const editKey = (messageId: string, editedTimestamp: string, content: string) =>
  `discord:edit:${messageId}:${editedTimestamp}:${Bun.hash(content).toString(36)}`;

const parsedTime = (v: unknown, fallback: number) => {
  const t = typeof v === "string" ? Date.parse(v) : Number.NaN;
  return Number.isFinite(t) ? t : fallback;
};

/**
 * `key` identifies the dispatch within its gateway session (session id and sequence): a RESUME replays a
 * dispatch under the same key, so a reaction is stored once. The bot's own reactions (`botId`) map to no
 * change: they are gw's own API actions, recorded by the action itself (send/message-actions.ts), so the
 * echo, whether it comes before or after the REST answer, adds nothing. `now` dates what Discord does not
 * date (deletes, reactions).
 */
export function changesOf(
  t: ChangeDispatch,
  d: unknown,
  ctx: {
    key: string;
    botId: string | null;
    now: number;
    nameOf: (userId: string) => string | null;
    /** Whether a guild-less channel is a group DM (its changes share its messages' queue). */
    isGroupDm?: (discordChannelId: string) => boolean;
  },
): MappedChanges | null {
  if (!isRecord(d)) return null;
  const channelId = channelOf(d, ctx.isGroupDm ?? (() => false));
  if (!channelId) return null;
  const base = { source: "community_chat" as const, timestampMs: ctx.now };
  if (t === "update") {
    if (!isSnowflake(d.id) || typeof d.content !== "string") return null;
    const at = parsedTime(d.edited_timestamp, ctx.now);
    const change = {
      ...base,
      kind: "edit" as const,
      targetPlatformId: d.id,
      text: d.content,
      timestampMs: at,
    };
    return {
      channelId,
      changes: [{ ...change, dedupeKey: editKey(d.id, String(d.edited_timestamp ?? at), d.content) }],
    };
  }
  if (t === "delete" || t === "delete_bulk") {
    const ids = t === "delete" ? [d.id] : Array.isArray(d.ids) ? d.ids : [];
    const changes = ids.filter(isSnowflake).map((id) => ({
      ...base,
      kind: "delete" as const,
      targetPlatformId: id,
      dedupeKey: `discord:delete:${id}`,
    }));
    return changes.length > 0 ? { channelId, changes } : null;
  }
  const emoji = emojiOf(d.emoji);
  if (!isSnowflake(d.message_id) || !isSnowflake(d.user_id) || !emoji) return null;
  if (ctx.botId !== null && d.user_id === ctx.botId) return { channelId, changes: [] };
  return {
    channelId,
    changes: [
      {
        ...base,
        kind: "reaction",
        targetPlatformId: d.message_id,
        emoji,
        added: t === "reaction_add",
        reactor: { id: d.user_id, displayName: reactorName(d, d.user_id, ctx.nameOf) },
        byOwner: false,
        dedupeKey: `discord:reaction:${ctx.key}`,
      },
    ],
  };
}
