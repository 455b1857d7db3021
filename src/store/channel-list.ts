/**
 * The channel list (extensions.md §2), a read model kept in step with messages by the message store's
 * writes (`added`, `removed`; store/message-writes.ts) and with read marks by a trigger (migration 5): a
 * page is one indexed query, newest activity first, with the asking agent's unread count (or a person's
 * one-to-one channels). Connectors write names and participants (`name` wins, else the route joins the
 * participants' names); a name arriving before any message makes a row not yet listed.
 */
import type { Database } from "bun:sqlite";
import type { ChannelType, Source } from "../core/envelope.ts";
import { createHeldWrites } from "./held-writes.ts";
import type { MessageRow } from "./messages.ts";

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

/**
 * A page of the list, all of it or one source's (the activity index walked newest first), or a person's
 * one-to-one channels (found by person, a handful, then sorted).
 */
export const CHANNEL_PAGE_SQL = (filter: PageFilter) => `
  SELECT l.channel_id, l.source, l.channel_type, l.name, l.participants, l.last_visible_at,
    l.allowed_count - coalesce(r.read_count, 0) AS unread_count
  FROM channel_list l INDEXED BY ${filter === "person" ? "channel_list_person" : "channel_list_recent"}
  LEFT JOIN channel_reads r ON r.agent_id = $agent AND r.channel_id = l.channel_id
  WHERE l.last_visible_at IS NOT NULL ${filter === "source" ? "AND l.source = $source" : ""}
    ${filter === "person" ? "AND l.person_id = $person AND ($source IS NULL OR l.source = $source)" : ""}
  ORDER BY l.last_visible_at DESC, l.channel_id DESC LIMIT $limit`;

type Written = Pick<
  MessageRow,
  | "id"
  | "channel_id"
  | "source"
  | "channel_type"
  | "direction"
  | "person_id"
  | "message_ts"
  | "allowlist_status"
>;

const visible = (m: Written) => m.allowlist_status === "allowed" || m.allowlist_status === "outbound";

/** A visible message stored: the channel's newest activity, allowed count and (one-to-one) person. */
const ADDED_SQL = `
  INSERT INTO channel_list (channel_id, source, channel_type, person_id, last_visible_at, allowed_count)
  VALUES ($channel, $source, $type, $person, $ts, $allowed)
  ON CONFLICT (channel_id) DO UPDATE SET
    last_visible_at = max(coalesce(last_visible_at, excluded.last_visible_at), excluded.last_visible_at),
    allowed_count = allowed_count + excluded.allowed_count`;

/**
 * The person of a one-to-one channel, written only when it changes: assigning the column at all would
 * move its index entry (channel_list_person) on every message.
 */
const PERSON_SQL = `
  UPDATE channel_list SET person_id = $person WHERE channel_id = $channel AND person_id IS NOT $person`;

/** A visible message now a tombstone: counted out, the newest activity found again. */
const REMOVED_SQL = `
  UPDATE channel_list SET
    allowed_count = allowed_count - $allowed,
    last_visible_at = (SELECT max(t) FROM (
      SELECT max(message_ts) AS t FROM messages WHERE channel_id = $channel AND allowlist_status = 'allowed'
      UNION ALL SELECT max(message_ts) FROM messages WHERE channel_id = $channel AND allowlist_status = 'outbound'))
  WHERE channel_id = $channel`;

const UNREAD_SQL = `
  UPDATE channel_reads SET read_count = read_count - 1
  WHERE channel_id = $channel AND agent_id IN (SELECT agent_id FROM read_marks WHERE message_id = $id)`;

type Op = { added: Written } | { removed: Written };

/**
 * The held writes of a transaction, one per channel: the added messages' newest time, allowed count and
 * latest person, then each channel with removals found again (after the additions, so a message added
 * and removed in one transaction is counted out), and one unread fix per removed allowed message.
 */
function tally(ops: readonly Op[]) {
  const added = new Map<
    string,
    {
      $channel: string;
      $source: Source;
      $type: ChannelType;
      $person: string | null;
      $ts: number;
      $allowed: number;
    }
  >();
  const removed = new Map<string, number>();
  const unread: { $channel: string; $id: string }[] = [];
  for (const op of ops) {
    const m = "added" in op ? op.added : op.removed;
    const allowed = m.allowlist_status === "allowed" ? 1 : 0;
    if ("removed" in op) {
      removed.set(m.channel_id, (removed.get(m.channel_id) ?? 0) + allowed);
      if (allowed) unread.push({ $channel: m.channel_id, $id: m.id });
      continue;
    }
    const person = m.channel_type === "dm" && m.direction === "inbound" ? m.person_id : null;
    const a = added.get(m.channel_id);
    if (!a) {
      added.set(m.channel_id, {
        $channel: m.channel_id,
        $source: m.source,
        $type: m.channel_type,
        $person: person,
        $ts: m.message_ts,
        $allowed: allowed,
      });
      continue;
    }
    a.$ts = Math.max(a.$ts, m.message_ts);
    a.$allowed += allowed;
    a.$person = person ?? a.$person;
  }
  return { added, removed, unread };
}

export function createChannelListStore(db: Database) {
  const addedStmt = db.prepare<unknown, [Record<string, string | number | null>]>(ADDED_SQL);
  const personStmt = db.prepare<unknown, [Record<string, string>]>(PERSON_SQL);
  const removedStmt = db.prepare<unknown, [Record<string, string | number>]>(REMOVED_SQL);
  const unreadStmt = db.prepare<unknown, [Record<string, string>]>(UNREAD_SQL);
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
  const held = createHeldWrites<Op>((ops) => {
    const { added, removed, unread } = tally(ops);
    for (const a of added.values()) {
      addedStmt.run(a);
      if (a.$person !== null) personStmt.run({ $channel: a.$channel, $person: a.$person });
    }
    for (const [channel, allowed] of removed) removedStmt.run({ $channel: channel, $allowed: allowed });
    for (const u of unread) unreadStmt.run(u);
  });
  return {
    /** A message just stored (the caller holds the transaction); only a visible one counts. */
    added(m: Written): void {
      if (visible(m)) held.write({ added: m });
    },
    /** A stored message (as it was) that is now a tombstone, its row already marked. */
    removed(m: Written): void {
      if (visible(m)) held.write({ removed: m });
    },
    /** Runs `work` inside a transaction, counting its messages per channel when it returns (held-writes.ts). */
    deferred: held.scope,
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
