/**
 * Discord message payloads to gw messages (pure). The same function maps a gateway MESSAGE_CREATE and
 * a REST history item, so live and catch-up messages are identical. Rules (decisions.md, discord.md
 * §5): DMs (channel_type 1, or no guild) are `community_chat:dm:<channel id>` with type `dm`; guild
 * channels and threads (threads are channels) are `community_chat:channel:<id>` with type `group`;
 * only default (0) and reply (19) messages with text or attachments are delivered; the bot's own
 * messages are never ingested; the timestamp is the snowflake's time; the display name is the member
 * nick, else the global name, else the username; `raw` is the payload as received.
 */
import type { ChannelType } from "../../core/envelope.ts";
import type { NormalizedMessage, StagedAttachment } from "../../ingest/ingest.ts";
import { isSnowflake, snowflakeTime } from "./snowflake.ts";

export interface DiscordAttachment {
  id: string;
  filename: string;
  size: number;
  url: string;
  content_type?: string;
}

/** The fields gw reads from a Discord message object; the rest is kept in `raw` untouched. */
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
const DM_CHANNEL_TYPES = new Set([1, 3]);
/** message_reference.type 0 is a reply; 1 is a forward, which quotes nothing in this channel. */
const REFERENCE_REPLY = 0;

export const CHANNEL_PREFIX = { dm: "community_chat:dm:", channel: "community_chat:channel:" } as const;

/** A payload with the fields gw relies on, or null (logged and skipped by the caller). */
export function asDiscordMessage(v: unknown): DiscordMessage | null {
  if (typeof v !== "object" || v === null) return null;
  const m = v as Record<string, unknown>;
  const author = m.author as Record<string, unknown> | undefined;
  if (!isSnowflake(m.id) || !isSnowflake(m.channel_id)) return null;
  if (typeof author !== "object" || author === null || !isSnowflake(author.id)) return null;
  if (m.attachments !== undefined && !Array.isArray(m.attachments)) return null;
  return v as DiscordMessage;
}

/** The kind of channel a live payload was posted in. */
export function kindOf(m: DiscordMessage): ChannelKind {
  if (m.channel_type !== undefined) return DM_CHANNEL_TYPES.has(m.channel_type) ? "dm" : "channel";
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
    raw: m as unknown as Record<string, unknown>,
    direction: "inbound",
  };
}
