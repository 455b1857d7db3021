/**
 * Per-agent read state. Read marks (message id, agent id, read time) are the record: one per pair,
 * never removed. To keep unread fast however the marks are spread, each agent's marks are also kept as
 * runs: maximal intervals, in (message_ts, id) order over allowed messages, of messages the agent has
 * read. Invariant: an allowed message lies inside one of the agent's runs exactly when the agent has
 * marked it. markRead extends or merges runs; storing an allowed message inside a run splits that run
 * (ingest calls splitRunsAt in its transaction). The unread walk takes the candidates up to the next
 * run and jumps over that run in one step, so its cost grows with the messages it returns and the runs
 * it jumps, never with how many messages are read.
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

/** A position in message order; walks take messages strictly after it. */
interface Key {
  ts: number;
  id: string;
}

/** Sorts after every message id at the same timestamp. */
const AFTER_ALL_IDS = "~";

/** Allowed messages after a position, for one combination of filters; exported for the plan tests. */
export function unreadCandidatesSql(filter: { source: boolean; channel: boolean }): string {
  const index = filter.channel ? "messages_channel_ts" : "messages_status_ts";
  return `
    SELECT * FROM messages m INDEXED BY ${index}
    WHERE ${filter.channel ? "m.channel_id = $channel AND " : ""}m.allowlist_status = 'allowed'
      AND (m.message_ts, m.id) > ($ts, $id)
      ${filter.source ? "AND m.source = $source" : ""}
    ORDER BY m.message_ts, m.id LIMIT $limit`;
}

export const RUN_AT_OR_BEFORE_SQL = `
  SELECT start_ts, start_id, end_ts, end_id FROM read_runs
  WHERE agent_id = ?1 AND (start_ts, start_id) <= (?2, ?3)
  ORDER BY start_ts DESC, start_id DESC LIMIT 1`;

type Run = { start_ts: number; start_id: string; end_ts: number; end_id: string };
type RunRow = Run & { agent_id: string };

const after = (a: Key, b: Key) => a.ts > b.ts || (a.ts === b.ts && a.id > b.id);
const keyOf = (m: MessageRow): Key => ({ ts: m.message_ts, id: m.id });

export function createReadStore(db: Database) {
  type Stmt = ReturnType<typeof db.prepare<MessageRow, Record<string, string | number>>>;
  const variants = new Map<string, Stmt>();
  const candidates = (source: boolean, channel: boolean): Stmt => {
    const k = `${source}${channel}`;
    let s = variants.get(k);
    if (!s) {
      s = db.prepare<MessageRow, Record<string, string | number>>(unreadCandidatesSql({ source, channel }));
      variants.set(k, s);
    }
    return s;
  };
  const runAtOrBefore = db.prepare<Run, [string, number, string]>(RUN_AT_OR_BEFORE_SQL);
  const runAfter = db.prepare<Run, [string, number, string]>(
    `SELECT start_ts, start_id, end_ts, end_id FROM read_runs
     WHERE agent_id = ?1 AND (start_ts, start_id) > (?2, ?3) ORDER BY start_ts, start_id LIMIT 1`,
  );
  const runStartingAt = db.prepare<Run, [string, number, string]>(
    "SELECT start_ts, start_id, end_ts, end_id FROM read_runs WHERE agent_id = ?1 AND start_ts = ?2 AND start_id = ?3",
  );
  const runsAcross = db.prepare<RunRow, [number, string]>(
    `SELECT * FROM read_runs INDEXED BY read_runs_end
     WHERE (end_ts, end_id) > (?1, ?2) AND (start_ts, start_id) < (?1, ?2)`,
  );
  const insertRun = db.prepare<unknown, [string, number, string, number, string]>(
    "INSERT INTO read_runs (agent_id, start_ts, start_id, end_ts, end_id) VALUES (?1, ?2, ?3, ?4, ?5)",
  );
  const setRunEnd = db.prepare<unknown, [string, number, string, number, string]>(
    "UPDATE read_runs SET end_ts = ?4, end_id = ?5 WHERE agent_id = ?1 AND start_ts = ?2 AND start_id = ?3",
  );
  const deleteRun = db.prepare<unknown, [string, number, string]>(
    "DELETE FROM read_runs WHERE agent_id = ?1 AND start_ts = ?2 AND start_id = ?3",
  );
  const prevAllowed = db.prepare<Key, [number, string]>(
    `SELECT message_ts AS ts, id FROM messages INDEXED BY messages_status_ts
     WHERE allowlist_status = 'allowed' AND (message_ts, id) < (?1, ?2) ORDER BY message_ts DESC, id DESC LIMIT 1`,
  );
  const nextAllowed = db.prepare<Key, [number, string]>(
    `SELECT message_ts AS ts, id FROM messages INDEXED BY messages_status_ts
     WHERE allowlist_status = 'allowed' AND (message_ts, id) > (?1, ?2) ORDER BY message_ts, id LIMIT 1`,
  );
  const allowedKey = db.prepare<Key, [string]>(
    "SELECT message_ts AS ts, id FROM messages WHERE id = ?1 AND allowlist_status = 'allowed'",
  );
  const mark = db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3) ON CONFLICT (message_id, agent_id) DO NOTHING",
  );

  /** The agent's run that contains `k`, if any. */
  const covering = (agentId: string, k: Key): Run | null => {
    const run = runAtOrBefore.get(agentId, k.ts, k.id);
    return run && !after(k, { ts: run.end_ts, id: run.end_id }) ? run : null;
  };

  /** Adds a newly marked message to the agent's runs, merging with the runs on either side. */
  const addToRuns = (agentId: string, k: Key): void => {
    const before = runAtOrBefore.get(agentId, k.ts, k.id);
    const prev = prevAllowed.get(k.ts, k.id);
    const next = nextAllowed.get(k.ts, k.id);
    const left = before && prev && before.end_ts === prev.ts && before.end_id === prev.id ? before : null;
    const right = next ? runStartingAt.get(agentId, next.ts, next.id) : null;
    if (left && right) {
      deleteRun.run(agentId, right.start_ts, right.start_id);
      setRunEnd.run(agentId, left.start_ts, left.start_id, right.end_ts, right.end_id);
    } else if (left) {
      setRunEnd.run(agentId, left.start_ts, left.start_id, k.ts, k.id);
    } else if (right) {
      deleteRun.run(agentId, right.start_ts, right.start_id);
      insertRun.run(agentId, k.ts, k.id, right.end_ts, right.end_id);
    } else {
      insertRun.run(agentId, k.ts, k.id, k.ts, k.id);
    }
  };

  const unread = (agentId: string, f: UnreadFilter): MessageRow[] => {
    let pos: Key = f.sinceMs === null ? { ts: BEFORE_ALL_TIME, id: "" } : { ts: f.sinceMs, id: AFTER_ALL_IDS };
    const inRun = covering(agentId, pos);
    if (inRun) pos = { ts: inRun.end_ts, id: inRun.end_id };
    const stmt = candidates(f.source !== null, f.channelId !== null);
    const params: Record<string, string | number> = {};
    if (f.source !== null) params.source = f.source;
    if (f.channelId !== null) params.channel = f.channelId;
    const out: MessageRow[] = [];
    // Each round takes the unread candidates before the next run, or jumps over that run.
    while (out.length < f.limit) {
      const next = runAfter.get(agentId, pos.ts, pos.id);
      const want = f.limit - out.length;
      const batch = stmt.all({ ...params, ts: pos.ts, id: pos.id, limit: want });
      let jumped = false;
      for (const m of batch) {
        if (next && !after({ ts: next.start_ts, id: next.start_id }, keyOf(m))) {
          pos = { ts: next.end_ts, id: next.end_id };
          jumped = true;
          break;
        }
        out.push(m);
        pos = keyOf(m);
      }
      if (!jumped && batch.length < want) break;
    }
    return out;
  };

  return {
    unread,
    /** Marks the given ids read for the agent; returns the number of unique ids submitted. */
    markRead: (agentId: string, ids: readonly string[], now: number): number =>
      db
        .transaction(() => {
          const unique = [...new Set(ids)];
          for (const id of unique) {
            const k = allowedKey.get(id);
            if (k && mark.run(id, agentId, now).changes === 1) addToRuns(agentId, k);
          }
          return unique.length;
        })
        .immediate(),
    /** Called right after an allowed message is stored: no run may cover it, as nobody has read it. */
    splitRunsAt(messageTs: number, messageId: string): void {
      const k = { ts: messageTs, id: messageId };
      for (const run of runsAcross.all(k.ts, k.id)) {
        const prev = prevAllowed.get(k.ts, k.id) as Key;
        const next = nextAllowed.get(k.ts, k.id) as Key;
        setRunEnd.run(run.agent_id, run.start_ts, run.start_id, prev.ts, prev.id);
        insertRun.run(run.agent_id, next.ts, next.id, run.end_ts, run.end_id);
      }
    },
    /** Rebuilds an agent's runs from its read marks (repair, and bulk-loaded marks in benchmarks). */
    rebuildRuns: (agentId: string): void =>
      db
        .transaction(() => {
          db.run("DELETE FROM read_runs WHERE agent_id = ?1", [agentId]);
          const rows = db
            .query<{ ts: number; id: string; is_read: number }, [string]>(
              `SELECT m.message_ts AS ts, m.id, r.message_id IS NOT NULL AS is_read
               FROM messages m INDEXED BY messages_status_ts
               LEFT JOIN read_marks r ON r.message_id = m.id AND r.agent_id = ?1
               WHERE m.allowlist_status = 'allowed' ORDER BY m.message_ts, m.id`,
            )
            .iterate(agentId);
          let start: Key | null = null;
          let end: Key | null = null;
          for (const r of rows) {
            if (r.is_read) {
              start ??= { ts: r.ts, id: r.id };
              end = { ts: r.ts, id: r.id };
            } else if (start && end) {
              insertRun.run(agentId, start.ts, start.id, end.ts, end.id);
              start = null;
            }
          }
          if (start && end) insertRun.run(agentId, start.ts, start.id, end.ts, end.id);
        })
        .immediate(),
  };
}

export type ReadStore = ReturnType<typeof createReadStore>;
