/**
 * GET /channels (extensions.md §2, §6): bearer and X-Agent-ID. One indexed read of the channel list
 * (store/channel-list.ts); a channel without a platform name is named by its people: the allowlist's display
 * name, else (iMessage) the Contacts name, else the id, read at request time so an edit shows at once. `q`
 * keeps the channels whose name or people's ids contain it (case-insensitive): "text Mom" finds Mom's chat.
 */
import { Elysia } from "elysia";
import type { Allowlist } from "../../allowlist/parse.ts";
import type { Source } from "../../core/envelope.ts";
import { type Names, NO_NAMES } from "../../core/names.ts";
import { formatTimestamp } from "../../core/time.ts";
import type { ChannelListRow, ChannelListStore } from "../../store/channel-list.ts";
import { agentIdOf } from "../agent-id.ts";
import { ChannelListResponse, ChannelsQuery, errorResponses } from "../schemas.ts";

/** A person in a channel by name: the allowlist's display name, else the Contacts name (iMessage), else the id. */
export function personName(source: Source, id: string, allowlist: Allowlist, names: Names): string {
  return (
    allowlist.lookup(source, id)?.display_name ??
    (source === "device_messenger" ? names.nameOf(id) : null) ??
    id
  );
}

/** The channel's name, else its participants' names (personName) joined by ", ", else the channel id. */
export function channelName(row: ChannelListRow, allowlist: Allowlist, names: Names = NO_NAMES): string {
  if (row.name !== "") return row.name;
  const people = (JSON.parse(row.participants) as string[]).map((id) =>
    personName(row.source, id, allowlist, names),
  );
  return people.length > 0 ? people.join(", ") : row.channel_id;
}

/** Whether a channel answers `q`: its name, or one of its people's ids, contains it (case-insensitive). Pure. */
export function channelMatches(row: ChannelListRow, name: string, q: string): boolean {
  const needle = q.toLocaleLowerCase();
  const ids = JSON.parse(row.participants) as string[];
  return [name, row.channel_id, ...ids].some((s) => s.toLocaleLowerCase().includes(needle));
}

/** How many channels a `q` search looks through (every channel a person could have, with room). */
const SEARCH_CHANNELS_MAX = 100_000;

export function channelRoutes(deps: {
  channelList: ChannelListStore;
  allowlist: () => Allowlist;
  names: Names;
}) {
  return new Elysia({ name: "channels" }).get(
    "/channels",
    ({ query, request }) => {
      const limit = query.limit ?? 100;
      const rows = deps.channelList.page({
        agentId: agentIdOf(request),
        source: (query.source ?? null) as Source | null,
        personId: query.person_id ?? null,
        limit: query.q === undefined ? limit : SEARCH_CHANNELS_MAX,
      });
      const allowlist = deps.allowlist();
      const named = rows.map((r) => ({ row: r, name: channelName(r, allowlist, deps.names) }));
      const kept =
        query.q === undefined ? named : named.filter((c) => channelMatches(c.row, c.name, query.q as string));
      return {
        channels: kept.slice(0, limit).map(({ row: r, name }) => ({
          channel_id: r.channel_id,
          source: r.source,
          channel_type: r.channel_type,
          name,
          last_message_at: formatTimestamp(r.last_visible_at),
          unread_count: Math.max(0, r.unread_count),
        })),
      };
    },
    {
      query: ChannelsQuery,
      response: { 200: ChannelListResponse, ...errorResponses(400, 401) },
      detail: {
        summary: "Channels",
        description:
          "Channels with at least one visible message, newest activity first, with this agent's unread count. " +
          "Names: Discord `guild #channel` (threads `guild #channel › thread`), DMs `@username`; iMessage the " +
          "chat's name, else its people's names (the allowlist's, else Contacts', else their handles). `q` " +
          "finds a conversation by name or by a person's id.",
      },
    },
  );
}
