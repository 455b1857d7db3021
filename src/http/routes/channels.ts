/**
 * GET /channels (extensions.md §2): bearer and X-Agent-ID. One indexed read of the channel list
 * (store/channel-list.ts); a channel without a platform name is named by its people, with the allowlist's
 * display names where it has them (read at request time, so an allowlist edit shows at once).
 */
import { Elysia } from "elysia";
import type { Allowlist } from "../../allowlist/parse.ts";
import type { Source } from "../../core/envelope.ts";
import { formatTimestamp } from "../../core/time.ts";
import type { ChannelListRow, ChannelListStore } from "../../store/channel-list.ts";
import { agentIdOf } from "../agent-id.ts";
import { ChannelListResponse, ChannelsQuery, errorResponses } from "../schemas.ts";

/** The channel's name, else its participants' display names joined by ", ", else the channel id. */
export function channelName(row: ChannelListRow, allowlist: Allowlist): string {
  if (row.name !== "") return row.name;
  const people = (JSON.parse(row.participants) as string[]).map(
    (id) => allowlist.lookup(row.source, id)?.display_name ?? id,
  );
  return people.length > 0 ? people.join(", ") : row.channel_id;
}

export function channelRoutes(deps: { channelList: ChannelListStore; allowlist: () => Allowlist }) {
  return new Elysia({ name: "channels" }).get(
    "/channels",
    ({ query, request }) => {
      const rows = deps.channelList.page({
        agentId: agentIdOf(request),
        source: (query.source ?? null) as Source | null,
        personId: query.person_id ?? null,
        limit: query.limit ?? 100,
      });
      const allowlist = deps.allowlist();
      return {
        channels: rows.map((r) => ({
          channel_id: r.channel_id,
          source: r.source,
          channel_type: r.channel_type,
          name: channelName(r, allowlist),
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
          "chat's name, else its people's display names.",
      },
    },
  );
}
