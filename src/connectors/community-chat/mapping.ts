/**
 * Discord message payloads to gw messages (pure; decisions.md, discord.md §5). The same functions map a
 * gateway MESSAGE_CREATE and a REST history item, so live and catch-up messages are identical. DMs are
 * `community_chat:dm:<channel id>` (type `dm`), guild channels and threads `community_chat:channel:<id>`
 * (type `group`). Only default (0) and reply (19) messages with text or attachments are delivered, never the
 * bot's own; `raw` is the payload's own fields with any other message it quotes (a reply's original, a
 * forward's snapshot) reduced to ids (raw.ts).
 */
import type { ChannelType } from "../../core/envelope.ts";
import type { NormalizedMessage, StagedAttachment } from "../../ingest/ingest.ts";
import { rawOf } from "./raw.ts";
import { isSnowflake, snowflakeTime } from "./snowflake.ts";

export interface DiscordAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  content_type?: string;
}

/** The fields gw reads from a Discord message object; `raw` keeps what raw.ts allows of the rest. */
export interface DiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  channel_type?: number;
  type?: number;
  author: { id: string; username: string; global_name?: string | null };
  member?: { nick?: string | null };
  content?: string;
  attachments?: DiscordAttachment[];
  message_reference?: { type?: number; message_id?: string };
}

export type ChannelKind = "dm" | "channel";

const DELIVERED_TYPES = new Set([0, 19]);
/** A one-to-one DM; a group DM (3) is a group: several people write there. */
const DM_CHANNEL_TYPE = 1;
/** message_reference.type 0 is a reply; 1 is a forward, which quotes nothing in this channel. */
const REFERENCE_REPLY = 0;

export const CHANNEL_PREFIX = { dm: "community_chat:dm:", channel: "community_chat:channel:" } as const;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
/** Absent, or of `type`. */
const optional = (v: unknown, type: "string" | "number") => v === undefined || typeof v === type;
/** Absent, null, or of `type`. */
const nullable = (v: unknown, type: "string" | "number") => v === null || optional(v, type);

/**
 * Deeper than any message object Discord sends (embeds, components, forwarded snapshots nest a few
 * levels), far below what JSON.stringify can write back: a payload nested deeper could never be stored
 * (its `raw` cannot be serialised), and retrying it would hold its channel forever.
 */
export const MAX_PAYLOAD_DEPTH = 64;

/** Whether objects or arrays inside `v` nest more than `max` levels (iterative: any depth is safe). */
function nestedDeeperThan(v: unknown, max: number): boolean {
  const pending: [unknown, number][] = [[v, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value !== "object" || value === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
  return false;
}

const isAttachment = (a: unknown) =>
  isRecord(a) &&
  typeof a.id === "string" &&
  typeof a.url === "string" &&
  typeof a.filename === "string" &&
  optional(a.size, "number") &&
  nullable(a.content_type, "string");

/**
 * A payload whose fields gw reads all have the types Discord documents, or null (logged and skipped by the
 * caller): a wrong type (a null author, content that is not a string...) or nesting deeper than
 * MAX_PAYLOAD_DEPTH refuses the payload whole; it is never coerced into a stored message.
 */
export function asDiscordMessage(v: unknown): DiscordMessage | null {
  if (!isRecord(v)) return null;
  const { author, member, attachments } = v;
  if (!isSnowflake(v.id) || !isSnowflake(v.channel_id)) return null;
  if (!isRecord(author) || !isSnowflake(author.id)) return null;
  if (!optional(author.username, "string") || !nullable(author.global_name, "string")) return null;
  if (!optional(v.content, "string") || !optional(v.type, "number")) return null;
  if (!optional(v.channel_type, "number") || !nullable(v.guild_id, "string")) return null;
  if (member != null && !(isRecord(member) && nullable(member.nick, "string"))) return null;
  if (attachments !== undefined && !(Array.isArray(attachments) && attachments.every(isAttachment)))
    return null;
  if (nestedDeeperThan(v, MAX_PAYLOAD_DEPTH)) return null;
  return v as unknown as DiscordMessage;
}

/**
 * The kind of channel a live payload was posted in: a one-to-one DM (channel_type 1, or no guild) or a
 * channel; a group DM (channel_type 3) is a channel of type `group`, never one-to-one.
 */
export function kindOf(m: DiscordMessage): ChannelKind {
  if (m.channel_type !== undefined) return m.channel_type === DM_CHANNEL_TYPE ? "dm" : "channel";
  return m.guild_id ? "channel" : "dm";
}

/** gw's channel for a Discord channel id. */
export function channelFor(
  kind: ChannelKind,
  discordChannelId: string,
): { id: string; type: ChannelType; platformRef: string } {
  return {
    id: CHANNEL_PREFIX[kind] + discordChannelId,
    type: kind === "dm" ? "dm" : "group",
    platformRef: discordChannelId,
  };
}

/** The kind of a stored gw channel id, or null when it is not a community-chat channel. */
export function kindOfChannelId(channelId: string): ChannelKind | null {
  if (channelId.startsWith(CHANNEL_PREFIX.dm)) return "dm";
  if (channelId.startsWith(CHANNEL_PREFIX.channel)) return "channel";
  return null;
}

export function displayName(m: DiscordMessage): string {
  return m.member?.nick || m.author.global_name || m.author.username || m.author.id;
}

export type Verdict = "deliver" | "own" | "system" | "empty";

export function classify(m: DiscordMessage, botUserId: string | null): Verdict {
  if (botUserId !== null && m.author.id === botUserId) return "own";
  if (!DELIVERED_TYPES.has(m.type ?? 0)) return "system";
  if ((m.content ?? "").trim() === "" && (m.attachments ?? []).length === 0) return "empty";
  return "deliver";
}

export function toMessage(
  m: DiscordMessage,
  kind: ChannelKind,
  attachments: readonly StagedAttachment[],
): NormalizedMessage {
  const ref = m.message_reference;
  return {
    source: "community_chat",
    platformId: m.id,
    channel: channelFor(kind, m.channel_id),
    sender: { id: m.author.id, displayName: displayName(m) },
    text: m.content ?? "",
    replyToPlatformId:
      ref && (ref.type ?? REFERENCE_REPLY) === REFERENCE_REPLY && isSnowflake(ref.message_id)
        ? ref.message_id
        : null,
    timestampMs: snowflakeTime(m.id),
    attachments,
    raw: rawOf(m as unknown as Record<string, unknown>),
    direction: "inbound",
  };
}
