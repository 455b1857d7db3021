/**
 * Message rows: insert, look up, context window and quarantine listing. Rows are never removed: a
 * deleted message becomes a tombstone (status `deleted`, text and raw purged); otherwise a row's
 * visibility never changes, and only its text (an edit, also in a raw payload's `content`) and an outbound
 * record's links change. Statements are prepared once.
 * The per-agent unread query lives in reads.ts because it is defined by read marks. Writes that change a
 * row's text or visibility also go to the search index: add them to search-index.ts's wrapper.
 */
import type { Database } from "bun:sqlite";
import type { AllowlistStatus, ChannelType, Direction, Source } from "../core/envelope.ts";

/** A stored message's status: how it shows to agents, or `deleted` (the tombstone of an unsent message). */
export type StoredStatus = AllowlistStatus | "deleted";

export type MessageRow = {
  id: string;
  source: Source;
  platform_id: string | null;
  channel_id: string;
  channel_type: ChannelType;
  sender_id: string;
  sender_name: string;
  person_id: string | null;
  text: string;
  reply_to: string | null;
  message_ts: number;
  direction: Direction;
  allowlist_status: StoredStatus;
  raw: string;
  created_at: number;
};

/**
 * Context neighbours of one visibility status; the two visible statuses (allowed, outbound) are read
 * separately and merged, so one index (channel, status, time) serves context and unread alike.
 */
export const CONTEXT_BEFORE_SQL = `
  SELECT * FROM messages INDEXED BY messages_channel_status_ts
  WHERE channel_id = ?1 AND allowlist_status = ?5 AND (message_ts, id) < (?2, ?3)
  ORDER BY message_ts DESC, id DESC LIMIT ?4`;

export const CONTEXT_AFTER_SQL = `
  SELECT * FROM messages INDEXED BY messages_channel_status_ts
  WHERE channel_id = ?1 AND allowlist_status = ?5 AND (message_ts, id) > (?2, ?3)
  ORDER BY message_ts ASC, id ASC LIMIT ?4`;

const VISIBLE = ["allowed", "outbound"] as const;
const byKey = (a: MessageRow, b: MessageRow) =>
  a.message_ts - b.message_ts || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export const QUARANTINE_SQL = `
  SELECT * FROM messages INDEXED BY messages_status_ts
  WHERE allowlist_status = 'unknown' AND message_ts > ?1
  ORDER BY message_ts DESC, id DESC LIMIT ?2`;

/** The same, older than a message (?3 its time, ?4 its id): the next page back. */
export const QUARANTINE_BEFORE_SQL = `
  SELECT * FROM messages INDEXED BY messages_status_ts
  WHERE allowlist_status = 'unknown' AND message_ts > ?1 AND (message_ts, id) < (?3, ?4)
  ORDER BY message_ts DESC, id DESC LIMIT ?2`;

/**
 * One quarantined sender: how many messages, the first and last, the newest one's text, and the services
 * their messages came over (iMessage's `raw.service`, sorted; empty for Discord).
 */
export interface QuarantinedSender {
  source: Source;
  sender_id: string;
  sender_name: string;
  channel_id: string;
  count: number;
  first_ts: number;
  last_ts: number;
  last_text: string;
  services: string[];
}

/**
 * Quarantined senders, most recent first: per sender, the newest message's text, name and channel,
 * where "newest" is the latest timestamp and, among messages of the same millisecond, the last to
 * arrive (ids are allocated in arrival order).
 */
export const QUARANTINED_SENDERS_SQL = `
  SELECT source, sender_id, sender_name, channel_id, last_text, last_ts FROM (
    SELECT source, sender_id, sender_name, channel_id, text AS last_text, message_ts AS last_ts, id,
      ROW_NUMBER() OVER (PARTITION BY source, sender_id ORDER BY message_ts DESC, id DESC) AS nth
    FROM messages INDEXED BY messages_status_ts
    WHERE allowlist_status = 'unknown' AND (?2 IS NULL OR source = ?2))
  WHERE nth = 1 ORDER BY last_ts DESC, id DESC LIMIT ?1`;
const QUARANTINED_COUNTS_SQL = `
  SELECT source, sender_id, COUNT(*) AS count, MIN(message_ts) AS first_ts,
    json_group_array(DISTINCT CASE WHEN source = 'device_messenger'
      THEN coalesce(json_extract(raw, '$.service'), 'no service') END) AS services
  FROM messages INDEXED BY messages_status_ts WHERE allowlist_status = 'unknown' GROUP BY source, sender_id`;

/**
 * An edit's raw: a payload with a string `content` (Discord's) gets the new text there; any other raw
 * (iMessage's has no `content`, a tombstone's is `{}`) stays as it is. Nested CASEs: json_type is only
 * asked of valid JSON.
 */
const RAW_WITH_CONTENT = `CASE WHEN json_valid(raw) THEN
    CASE WHEN json_type(raw, '$.content') = 'text' THEN json_set(raw, '$.content', ?2) ELSE raw END
  ELSE raw END`;

/** Lowest possible `since`: every stored timestamp is above it. */
export const BEFORE_ALL_TIME = -8.64e15;

/** The message store's statements, prepared once per connection. */
function prepareStatements(db: Database) {
  const columns = `(id, source, platform_id, channel_id, channel_type, sender_id, sender_name, person_id,
       text, reply_to, message_ts, direction, allowlist_status, raw, created_at)
     VALUES ($id, $source, $platform_id, $channel_id, $channel_type, $sender_id, $sender_name, $person_id,
       $text, $reply_to, $message_ts, $direction, $allowlist_status, $raw, $created_at)`;
  return {
    insert: db.prepare(`INSERT INTO messages ${columns}`),
    insertNew: db.prepare(`INSERT OR IGNORE INTO messages ${columns}`),
    byId: db.prepare<MessageRow, [string]>("SELECT * FROM messages WHERE id = ?1"),
    byPlatform: db.prepare<{ id: string }, [string, string]>(
      "SELECT id FROM messages WHERE source = ?1 AND platform_id = ?2",
    ),
    rowByPlatform: db.prepare<MessageRow, [string, string]>(
      "SELECT * FROM messages WHERE source = ?1 AND platform_id = ?2",
    ),
    setText: db.prepare<unknown, [string, string]>(`UPDATE messages SET text = ?2, raw = ${RAW_WITH_CONTENT}
      WHERE id = ?1`),
    tombstone: db.prepare<unknown, [string]>(
      "UPDATE messages SET allowlist_status = 'deleted', text = '', raw = '{}' WHERE id = ?1",
    ),
    before: db.prepare<MessageRow, [string, number, string, number, string]>(CONTEXT_BEFORE_SQL),
    after: db.prepare<MessageRow, [string, number, string, number, string]>(CONTEXT_AFTER_SQL),
    quarantined: db.prepare<MessageRow, [number, number]>(QUARANTINE_SQL),
    quarantinedBefore: db.prepare<MessageRow, [number, number, number, string]>(QUARANTINE_BEFORE_SQL),
    unlinkedOutbound: db.prepare<MessageRow, [string, string, number, number]>(
      `SELECT * FROM messages INDEXED BY messages_channel_status_ts
     WHERE channel_id = ?2 AND allowlist_status = 'outbound' AND message_ts BETWEEN ?3 AND ?4
       AND source = ?1 AND platform_id IS NULL
     ORDER BY message_ts, id`,
    ),
    senders: db.prepare<Omit<QuarantinedSender, "count" | "first_ts" | "services">, [number, Source | null]>(
      QUARANTINED_SENDERS_SQL,
    ),
    senderCounts: db.prepare<
      { source: string; sender_id: string; count: number; first_ts: number; services: string },
      []
    >(QUARANTINED_COUNTS_SQL),
    setPlatform: db.prepare<unknown, [string, string]>(
      "UPDATE messages SET platform_id = ?2 WHERE id = ?1 AND platform_id IS NULL",
    ),
    setReplyTo: db.prepare<unknown, [string, string]>(
      "UPDATE messages SET reply_to = ?2 WHERE id = ?1 AND reply_to IS NULL",
    ),
  };
}

export function createMessageStore(db: Database) {
  const s = prepareStatements(db);
  return {
    insert(row: MessageRow): void {
      s.insert.run(row);
    },
    /**
     * Inserts unless a message with the same (source, platform id) exists; false when it does (one index
     * probe instead of a lookup and an insert). Any other constraint failure still throws.
     */
    insertIfNew(row: MessageRow): boolean {
      if (s.insertNew.run(row).changes === 1) return true;
      if (row.platform_id !== null && s.byPlatform.get(row.source, row.platform_id)) return false;
      throw new Error(`message ${row.id} was not inserted (a constraint refused it)`);
    },
    get(id: string): MessageRow | null {
      return s.byId.get(id);
    },
    byPlatformId(source: Source, platformId: string): MessageRow | null {
      return s.rowByPlatform.get(source, platformId);
    },
    /** An edit: the message's current text (what every read shows from now on), in `raw.content` too. */
    setText(id: string, text: string): void {
      s.setText.run(id, text);
    },
    /** An unsent or deleted message: its text and raw payload purged, the row kept as a tombstone. */
    markDeleted(id: string): void {
      s.tombstone.run(id);
    },
    idByPlatformId(source: Source, platformId: string): string | null {
      return s.byPlatform.get(source, platformId)?.id ?? null;
    },
    /** Links an outbound record to the platform's id for it once the platform confirms the send. */
    linkPlatformId(id: string, platformId: string): boolean {
      return s.setPlatform.run(id, platformId).changes === 1;
    },
    /** Gives an outbound record stored from the platform's echo the message its send replied to. */
    setReplyTo(id: string, replyTo: string): void {
      s.setReplyTo.run(id, replyTo);
    },
    /** Outbound records of a channel not yet linked to a platform id, sent between two instants. */
    unlinkedOutbound(source: Source, channelId: string, fromMs: number, toMs: number): MessageRow[] {
      return s.unlinkedOutbound.all(source, channelId, fromMs, toMs);
    },
    /** Up to `nBefore` older and `nAfter` newer visible neighbours in the same channel, chronological. */
    context(target: MessageRow, nBefore: number, nAfter: number): MessageRow[] {
      const side = (stmt: typeof s.before, n: number) =>
        n === 0
          ? []
          : VISIBLE.flatMap((status) => stmt.all(target.channel_id, target.message_ts, target.id, n, status));
      const older = side(s.before, nBefore)
        .sort(byKey)
        .slice(-nBefore || 0);
      const newer = side(s.after, nAfter).sort(byKey).slice(0, nAfter);
      return [...(nBefore === 0 ? [] : older), target, ...newer];
    },
    /** The `limit` most recent quarantined senders (of one source), with their counts (gw quarantine). */
    quarantinedSenders(limit: number, source: Source | null = null): QuarantinedSender[] {
      const recent = s.senders.all(limit, source);
      if (recent.length === 0) return [];
      const counts = new Map(s.senderCounts.all().map((c) => [`${c.source} ${c.sender_id}`, c]));
      return recent.map((s) => {
        const c = counts.get(`${s.source} ${s.sender_id}`);
        const services = (JSON.parse(c?.services ?? "[]") as unknown[]).filter(
          (x): x is string => typeof x === "string",
        );
        return { ...s, count: c?.count ?? 1, first_ts: c?.first_ts ?? s.last_ts, services: services.sort() };
      });
    },
    /**
     * Quarantined messages newest first, `message_ts` strictly greater than `sinceMs`; with `before`, only
     * those older than that message (in (message_ts, id) order: the page after the one it ended).
     */
    quarantine(
      sinceMs: number | null,
      limit: number,
      before: Pick<MessageRow, "message_ts" | "id"> | null = null,
    ): MessageRow[] {
      if (before)
        return s.quarantinedBefore.all(sinceMs ?? BEFORE_ALL_TIME, limit, before.message_ts, before.id);
      return s.quarantined.all(sinceMs ?? BEFORE_ALL_TIME, limit);
    },
  };
}

export type MessageStore = ReturnType<typeof createMessageStore>;
