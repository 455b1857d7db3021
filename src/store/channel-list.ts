/**
 * The channel list (extensions.md §2): a read model that triggers keep in step with messages and read marks
 * (migration 5), so a page is one indexed query: channels with a visible message, newest activity first,
 * with the asking agent's unread count (or a person's one-to-one channels: the phone approval's targets). Connectors write names and participants (`name` wins; else the
 * route joins the participants' names); a name arriving before any message makes a row not yet listed.
 */
import type { Database } from "bun:sqlite";
import type { ChannelType, Source } from "../core/envelope.ts";

export interface ChannelName {
  channelId: string;
  source: Source;
  type: ChannelType;
  /** The platform's name of the channel; "" when it has none (an unnamed group chat). */
  name: string;
  /** The platform ids of the other people in it, for a channel without a name. */
  participants: readonly string[];
}

export type ChannelListRow = {
  channel_id: string;
  source: Source;
  channel_type: ChannelType;
  name: string;
  participants: string;
  last_visible_at: number;
  unread_count: number;
};

type PageFilter = "all" | "source" | "person";

const PAGE_INDEX: Record<PageFilter, string> = {
  all: "channel_list_recent",
  source: "channel_list_source_recent",
  person: "channel_list_person_recent",
};

/** A page of the list, all of it or one source's, or a person's one-to-one channels. */
export const CHANNEL_PAGE_SQL = (filter: PageFilter) => `
  SELECT l.channel_id, l.source, l.channel_type, l.name, l.participants, l.last_visible_at,
    l.allowed_count - coalesce(r.read_count, 0) AS unread_count
  FROM channel_list l INDEXED BY ${PAGE_INDEX[filter]}
  LEFT JOIN channel_reads r ON r.agent_id = $agent AND r.channel_id = l.channel_id
  WHERE l.last_visible_at IS NOT NULL ${filter === "source" ? "AND l.source = $source" : ""}
    ${filter === "person" ? "AND l.person_id = $person AND ($source IS NULL OR l.source = $source)" : ""}
  ORDER BY l.last_visible_at DESC, l.channel_id DESC LIMIT $limit`;

export function createChannelListStore(db: Database) {
  const name = db.prepare<unknown, [Record<string, string>]>(
    `INSERT INTO channel_list (channel_id, source, channel_type, name, participants)
     VALUES ($id, $source, $type, $name, $participants)
     ON CONFLICT (channel_id) DO UPDATE SET name = excluded.name, participants = excluded.participants
     WHERE name IS NOT excluded.name OR participants IS NOT excluded.participants`,
  );
  const pages = {
    all: db.prepare<ChannelListRow, [Record<string, string | number | null>]>(CHANNEL_PAGE_SQL("all")),
    source: db.prepare<ChannelListRow, [Record<string, string | number | null>]>(CHANNEL_PAGE_SQL("source")),
    person: db.prepare<ChannelListRow, [Record<string, string | number | null>]>(CHANNEL_PAGE_SQL("person")),
  };
  return {
    /** Sets channels' names and participants (a row that already says so is not written). */
    setNames: (names: readonly ChannelName[]): void => {
      for (const n of names)
        name.run({
          $id: n.channelId,
          $source: n.source,
          $type: n.type,
          $name: n.name,
          $participants: JSON.stringify(n.participants),
        });
    },
    /**
     * Channels with at least one visible message, newest activity first, unread counted for `agentId`;
     * with `personId`, only the one-to-one channels where that allowlisted person wrote.
     */
    page: (q: { agentId: string; source: Source | null; personId?: string | null; limit: number }) => {
      const params = { $agent: q.agentId, $limit: q.limit };
      if (q.personId) return pages.person.all({ ...params, $person: q.personId, $source: q.source });
      return q.source === null ? pages.all.all(params) : pages.source.all({ ...params, $source: q.source });
    },
  };
}

export type ChannelListStore = ReturnType<typeof createChannelListStore>;
