/**
 * Per-agent read state: read marks (one per message id and agent id, never removed) and the unread
 * query. To keep unread fast when an agent has read almost everything, each agent has a floor: every
 * allowed message ordered before (message_ts, id) of the floor is read by that agent. mark_read moves
 * the floor up to the agent's first unread message; storing an allowed message below a floor moves
 * that floor down (ingest calls lowerFloors in its transaction). The floor only narrows the scan; the
 * NOT EXISTS on read_marks still decides.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";
import { BEFORE_ALL_TIME, type MessageRow } from "./messages.ts";

export interface UnreadFilter {
  source: Source | null;
  channelId: string | null;
  /** Only messages with message_ts strictly greater (epoch ms). */
  sinceMs: number | null;
  limit: number;
}

/** The unread query for one combination of filters; exported so plan tests use the very same SQL. */
export function unreadSql(filter: { source: boolean; channel: boolean }): string {
  const index = filter.channel ? "messages_channel_ts" : "messages_status_ts";
  return `
    SELECT * FROM messages m INDEXED BY ${index}
    WHERE ${filter.channel ? "m.channel_id = $channel AND " : ""}m.allowlist_status = 'allowed'
      AND (m.message_ts, m.id) >= ($ts, $id)
      ${filter.source ? "AND m.source = $source" : ""}
      AND NOT EXISTS (SELECT 1 FROM read_marks r WHERE r.message_id = m.id AND r.agent_id = $agent)
    ORDER BY m.message_ts, m.id LIMIT $limit`;
}

interface Key {
  message_ts: number;
  message_id: string;
}

export function createReadStore(db: Database) {
  const variants = new Map<
    string,
    ReturnType<typeof db.prepare<MessageRow, Record<string, string | number>>>
  >();
  const unreadStmt = (source: boolean, channel: boolean) => {
    const k = `${source}${channel}`;
    let s = variants.get(k);
    if (!s) {
      s = db.prepare<MessageRow, Record<string, string | number>>(unreadSql({ source, channel }));
      variants.set(k, s);
    }
    return s;
  };
  const floorOf = db.prepare<Key, [string]>(
    "SELECT message_ts, message_id FROM read_floors WHERE agent_id = ?1",
  );
  const setFloor = db.prepare<unknown, [string, number, string]>(
    `INSERT INTO read_floors (agent_id, message_ts, message_id) VALUES (?1, ?2, ?3)
     ON CONFLICT (agent_id) DO UPDATE SET message_ts = excluded.message_ts, message_id = excluded.message_id`,
  );
  const lower = db.prepare<unknown, [number, string]>(
    "UPDATE read_floors SET message_ts = ?1, message_id = ?2 WHERE (message_ts, message_id) > (?1, ?2)",
  );
  const lastAllowed = db.prepare<Key, []>(
    `SELECT message_ts, id AS message_id FROM messages INDEXED BY messages_status_ts
     WHERE allowlist_status = 'allowed' ORDER BY message_ts DESC, id DESC LIMIT 1`,
  );
  const mark = db.prepare<unknown, [string, string, number]>(
    `INSERT INTO read_marks (message_id, agent_id, read_at)
     SELECT id, ?2, ?3 FROM messages WHERE id = ?1 AND allowlist_status = 'allowed'
     ON CONFLICT (message_id, agent_id) DO NOTHING`,
  );

  const unread = (agentId: string, f: UnreadFilter): MessageRow[] => {
    const floor = floorOf.get(agentId);
    // `message_ts > since` on integer milliseconds is `(message_ts, id) >= (since + 1, '')`.
    let ts = f.sinceMs === null ? BEFORE_ALL_TIME : f.sinceMs + 1;
    let id = "";
    if (floor && (floor.message_ts > ts || (floor.message_ts === ts && floor.message_id > id))) {
      ts = floor.message_ts;
      id = floor.message_id;
    }
    const params: Record<string, string | number> = { agent: agentId, ts, id, limit: f.limit };
    if (f.source !== null) params.source = f.source;
    if (f.channelId !== null) params.channel = f.channelId;
    return unreadStmt(f.source !== null, f.channelId !== null).all(params);
  };

  return {
    unread,
    /** Marks the given ids read for the agent; returns the number of unique ids submitted. */
    markRead: (agentId: string, ids: readonly string[], now: number): number =>
      db
        .transaction(() => {
          const unique = [...new Set(ids)];
          for (const id of unique) mark.run(id, agentId, now);
          const first = unread(agentId, { source: null, channelId: null, sinceMs: null, limit: 1 })[0];
          const floor = first ? { message_ts: first.message_ts, message_id: first.id } : lastAllowed.get();
          if (floor) setFloor.run(agentId, floor.message_ts, floor.message_id);
          return unique.length;
        })
        .immediate(),
    /** Called when an allowed message is stored: no floor may stay above it. */
    lowerFloors(messageTs: number, messageId: string): void {
      lower.run(messageTs, messageId);
    },
  };
}

export type ReadStore = ReturnType<typeof createReadStore>;
