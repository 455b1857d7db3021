/**
 * Event rows (extensions.md §1): one per change to a stored message, deduplicated by the platform's key
 * (a replay or a re-read inserts nothing), with `visible` decided when stored. Visible events are read
 * in id order after a cursor. Statements are prepared once.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";
import type { EventKind, GwEvent } from "../core/event.ts";
import { formatTimestamp } from "../core/time.ts";

export type EventRow = {
  id: string;
  kind: EventKind;
  source: Source;
  channel_id: string;
  message_id: string;
  sender_id: string;
  sender_name: string;
  person_id: string | null;
  event_ts: number;
  data: string;
  dedupe_key: string;
  visible: 0 | 1;
  created_at: number;
};

export function createEventStore(db: Database) {
  const insert = db.prepare<unknown, [EventRow]>(
    `INSERT INTO events (id, kind, source, channel_id, message_id, sender_id, sender_name, person_id, event_ts,
       data, dedupe_key, visible, created_at)
     VALUES ($id, $kind, $source, $channel_id, $message_id, $sender_id, $sender_name, $person_id, $event_ts,
       $data, $dedupe_key, $visible, $created_at)`,
  );
  const byKey = db.prepare<{ id: string }, [string]>("SELECT id FROM events WHERE dedupe_key = ?1");
  const byId = db.prepare<EventRow, [string]>("SELECT * FROM events WHERE id = ?1");
  const after = db.prepare<EventRow, [string, number]>(
    "SELECT * FROM events INDEXED BY events_visible WHERE visible = 1 AND id > ?1 ORDER BY id LIMIT ?2",
  );
  const lastReaction = db.prepare<{ kind: EventKind }, [string, string, string]>(
    `SELECT kind FROM events INDEXED BY events_message
     WHERE message_id = ?1 AND sender_id = ?2 AND data = ?3 AND kind IN ('reaction.added', 'reaction.removed')
     ORDER BY id DESC LIMIT 1`,
  );
  const purgeEdits = db.prepare<unknown, [string]>(
    "UPDATE events SET data = '{}' WHERE message_id = ?1 AND kind = 'message.edited'",
  );
  const latest = db.prepare<{ id: string | null }, []>(
    "SELECT MAX(id) AS id FROM events INDEXED BY events_visible WHERE visible = 1",
  );
  return {
    insert: (row: EventRow): void => void insert.run(row),
    /** Whether an event with this platform key was stored already. */
    seen: (dedupeKey: string): boolean => byKey.get(dedupeKey) !== null,
    get: (id: string): EventRow | null => byId.get(id),
    /** Visible events with an id greater than `sinceId` ("" for all), oldest first. */
    visibleAfter: (sinceId: string, limit: number): EventRow[] => after.all(sinceId, limit),
    /** Whether `senderId`'s reaction with `emoji` on the message stands now, by the events stored. */
    reactionStands: (messageId: string, senderId: string, emoji: string): boolean =>
      lastReaction.get(messageId, senderId, JSON.stringify({ emoji }))?.kind === "reaction.added",
    /** A deleted message's earlier edits keep no text: their data becomes `{}` (extensions.md §4). */
    purgeEdits: (messageId: string): void => void purgeEdits.run(messageId),
    /** The newest visible event's id, or null. */
    latestVisibleId: (): string | null => latest.get()?.id ?? null,
  };
}

export type EventStore = ReturnType<typeof createEventStore>;

/** The Event as agents see it. */
export function toEvent(row: EventRow): GwEvent {
  return {
    id: row.id,
    kind: row.kind,
    source: row.source,
    channel_id: row.channel_id,
    message_id: row.message_id,
    sender: { id: row.sender_id, display_name: row.sender_name, person_id: row.person_id },
    timestamp: formatTimestamp(row.event_ts),
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}
