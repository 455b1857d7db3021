/**
 * Discord channel names for the channel list (extensions.md §2), kept from the gateway's own dispatches,
 * never fetched: a guild channel is `guild #channel`, a thread `guild #channel › thread`, a DM `@username`
 * of the person in it (from its messages, stored with them). `apply` takes one dispatch and answers the names it changed (a guild's rename
 * renames its channels and threads, a channel's its threads). Pure state; malformed payloads change nothing.
 */
import type { ChannelName } from "../../store/channel-list.ts";
import { channelFor } from "./mapping.ts";
import { isSnowflake } from "./snowflake.ts";

type Rec = Record<string, unknown>;
const isRecord = (v: unknown): v is Rec => typeof v === "object" && v !== null && !Array.isArray(v);
const records = (v: unknown): Rec[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** Text channels, announcement channels, voice and stage chats, and threads: what carries messages. */
const NAMED_TYPES = new Set([0, 2, 5, 10, 11, 12, 13, 15, 16]);

interface Place {
  guildId: string;
  name: string;
  parentId: string | null;
}

export type NameDispatch = "guild" | "guild_update" | "channel" | "thread";

export function createChannelDirectory() {
  const guilds = new Map<string, string>();
  const places = new Map<string, Place>();

  const nameOf = (id: string): string | null => {
    const p = places.get(id);
    if (!p) return null;
    const guild = guilds.get(p.guildId) ?? "";
    const parent = p.parentId ? places.get(p.parentId) : undefined;
    const prefix = guild ? `${guild} ` : "";
    return parent ? `${prefix}#${parent.name} › ${p.name}` : `${prefix}#${p.name}`;
  };
  const named = (id: string): ChannelName[] => {
    const name = nameOf(id);
    if (name === null) return [];
    return [{ ...channelOf(id), name, participants: [] }];
  };
  const channelOf = (id: string) => {
    const c = channelFor("channel", id);
    return { channelId: c.id, source: "community_chat" as const, type: c.type };
  };
  /** A channel or thread and what is named after it (its threads). */
  const renamedWith = (id: string): ChannelName[] => [
    ...named(id),
    ...[...places.entries()].filter(([, p]) => p.parentId === id).flatMap(([child]) => named(child)),
  ];

  const keep = (c: Rec, guildId: string | null): string | null => {
    const id = c.id;
    const name = text(c.name);
    const gid = isSnowflake(c.guild_id) ? c.guild_id : guildId;
    if (!isSnowflake(id) || !name || !gid || (typeof c.type === "number" && !NAMED_TYPES.has(c.type)))
      return null;
    places.set(id, { guildId: gid, name, parentId: isSnowflake(c.parent_id) ? c.parent_id : null });
    return id;
  };

  const guild = (d: Rec): ChannelName[] => {
    if (!isSnowflake(d.id)) return [];
    const name = text(d.name);
    if (name) guilds.set(d.id, name);
    const guildId = d.id;
    for (const c of [...records(d.channels), ...records(d.threads)]) keep(c, guildId);
    return [...places.entries()].filter(([, p]) => p.guildId === guildId).flatMap(([id]) => named(id));
  };

  return {
    apply(t: NameDispatch, d: unknown): ChannelName[] {
      if (!isRecord(d)) return [];
      if (t === "guild") return guild(d);
      if (t === "guild_update") {
        const name = text(d.name);
        if (!isSnowflake(d.id) || !name) return [];
        guilds.set(d.id, name);
        return guild({ id: d.id });
      }
      const id = keep(d, null);
      return id ? renamedWith(id) : [];
    },
  };
}

export type ChannelDirectory = ReturnType<typeof createChannelDirectory>;

/** A DM's name, `@username` of the person in it, from a batch of its messages (the bot's do not say). */
export function dmName(
  channelId: string,
  payloads: readonly { author: { id: string; username?: string } }[],
  botId: string | null,
): ChannelName | null {
  const author = payloads.findLast((m) => m.author.id !== botId && text(m.author.username))?.author;
  if (!author) return null;
  const c = channelFor("dm", channelId);
  return {
    channelId: c.id,
    source: "community_chat",
    type: c.type,
    name: `@${author.username}`,
    participants: [author.id],
  };
}
