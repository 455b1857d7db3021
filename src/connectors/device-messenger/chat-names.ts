/**
 * Chats' names and people as channel names (pure; extensions.md §2): a group is its chat, named by its
 * `display_name` when set; a one-to-one channel (the handle) may gather several chats (iMessage and SMS),
 * whose people and first name are merged. A chat whose kind cannot be told is left out, as its messages are.
 */
import type { ChannelName } from "../../store/channel-list.ts";
import type { ChatNameRow } from "./chat-db.ts";
import { channelOf } from "./rows.ts";

const SEPARATOR = "\u001f";

export function channelNamesOf(rows: readonly ChatNameRow[]): ChannelName[] {
  const byChannel = new Map<string, ChannelName & { people: Set<string> }>();
  for (const row of rows) {
    const channel = channelOf(row);
    if (!channel) continue;
    const entry = byChannel.get(channel.id) ?? {
      channelId: channel.id,
      source: "device_messenger" as const,
      type: channel.type,
      name: "",
      participants: [],
      people: new Set<string>(),
    };
    if (entry.name === "" && row.display_name?.trim()) entry.name = row.display_name.trim();
    for (const p of (row.participants ?? "").split(SEPARATOR)) if (p !== "") entry.people.add(p);
    byChannel.set(channel.id, entry);
  }
  return [...byChannel.values()].map(({ people, ...n }) => ({ ...n, participants: [...people].sort() }));
}
