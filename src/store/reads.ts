/**
 * Per-agent read state. Read marks (message id, agent id, read time) are the record: one per pair,
 * never removed. So that unread stays fast however the marks are spread, each agent's marks are also
 * kept as runs: maximal intervals, in (message_ts, id) order, of allowed messages the agent has read,
 * within a scope — all messages (`*`), one source (`source:<s>`) or one channel (`channel:<id>`).
 * Invariant, per scope: an allowed message of the scope lies inside one of the agent's runs of that
 * scope exactly when the agent has marked it. markRead extends or merges the three runs a message
 * belongs to; storing an allowed message inside a run splits it (ingest calls splitRunsAt in its
 * transaction). An unread walk uses the scope of its filter, takes the message keys up to the next run
 * (all unread) and jumps that run whole; between two runs of a scope lies at least one unread message of
 * that scope, so a walk costs at most one round per message returned, however many messages are read;
 * full rows are read once, for the page.
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

type ScopeKind = "all" | "source" | "channel";

/** A position in message order; walks take messages strictly after it. */
interface Key {
  ts: number;
  id: string;
}

/** Sorts after every message id at the same timestamp. */
const AFTER_ALL_IDS = "~";

const SCOPE_WHERE: Record<ScopeKind, { index: string; where: string }> = {
  all: { index: "messages_status_ts", where: "m.allowlist_status = 'allowed'" },
  source: {
    index: "messages_source_status_ts",
    where: "m.source = $value AND m.allowlist_status = 'allowed'",
  },
  channel: {
    index: "messages_channel_status_ts",
    where: "m.channel_id = $value AND m.allowlist_status = 'allowed'",
  },
};

/**
 * Keys of the allowed messages of a scope after a position and, when `bounded`, before the start of
 * the agent's next run: every one of them is unread. Covered by the scope's index (no table lookup
 * unless a source filter rides along a channel scope). Exported for the plan tests.
 */
export function unreadCandidatesSql(kind: ScopeKind, alsoSource = false, bounded = false): string {
  const { index, where } = SCOPE_WHERE[kind];
  return `
    SELECT m.message_ts AS ts, m.id AS id FROM messages m INDEXED BY ${index}
    WHERE ${where} AND (m.message_ts, m.id) > ($ts, $id)${bounded ? " AND (m.message_ts, m.id) < ($end_ts, $end_id)" : ""}
      ${alsoSource ? "AND m.source = $source" : ""}
    ORDER BY m.message_ts, m.id LIMIT $limit`;
}

const ROWS_BY_IDS_SQL = "SELECT * FROM messages WHERE id IN (SELECT value FROM json_each(?1))";

function neighbourSql(kind: ScopeKind, direction: "prev" | "next"): string {
  const { index, where } = SCOPE_WHERE[kind];
  const [op, order] = direction === "prev" ? ["<", "DESC"] : [">", "ASC"];
  return `
    SELECT m.message_ts AS ts, m.id FROM messages m INDEXED BY ${index}
    WHERE ${where} AND (m.message_ts, m.id) ${op} ($ts, $id)
    ORDER BY m.message_ts ${order}, m.id ${order} LIMIT 1`;
}

export const RUN_AT_OR_BEFORE_SQL = `
  SELECT start_ts, start_id, end_ts, end_id FROM read_runs
  WHERE agent_id = ?1 AND scope = ?2 AND (start_ts, start_id) <= (?3, ?4)
  ORDER BY start_ts DESC, start_id DESC LIMIT 1`;

type Run = { start_ts: number; start_id: string; end_ts: number; end_id: string };
type Scope = { kind: ScopeKind; value: string; name: string };

const after = (a: Key, b: Key) => a.ts > b.ts || (a.ts === b.ts && a.id > b.id);
const keyOf = (m: { message_ts: number; id: string }): Key => ({ ts: m.message_ts, id: m.id });

function scopesOf(m: { source: string; channel_id: string }): Scope[] {
  return [
    { kind: "all", value: "", name: "*" },
    { kind: "source", value: m.source, name: `source:${m.source}` },
    { kind: "channel", value: m.channel_id, name: `channel:${m.channel_id}` },
  ];
}

function scopeOfFilter(f: UnreadFilter): Scope {
  if (f.channelId !== null) return { kind: "channel", value: f.channelId, name: `channel:${f.channelId}` };
  if (f.source !== null) return { kind: "source", value: f.source, name: `source:${f.source}` };
  return { kind: "all", value: "", name: "*" };
}

export function createReadStore(db: Database) {
  const cache = new Map<string, ReturnType<typeof db.prepare>>();
  const stmt = <R>(sql: string) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      cache.set(sql, s);
    }
    return s as unknown as {
      get(p: Record<string, string | number>): R | null;
      all(p: Record<string, string | number>): R[];
    };
  };
  const neighbour = (scope: Scope, direction: "prev" | "next", k: Key): Key | null =>
    stmt<Key>(neighbourSql(scope.kind, direction)).get({ value: scope.value, ts: k.ts, id: k.id });

  const runAtOrBefore = db.prepare<Run, [string, string, number, string]>(RUN_AT_OR_BEFORE_SQL);
  const runsAfter = db.prepare<Run, [string, string, number, string, number]>(
    `SELECT start_ts, start_id, end_ts, end_id FROM read_runs
     WHERE agent_id = ?1 AND scope = ?2 AND (start_ts, start_id) > (?3, ?4) ORDER BY start_ts, start_id LIMIT ?5`,
  );
  const runStartingAt = db.prepare<Run, [string, string, number, string]>(
    "SELECT start_ts, start_id, end_ts, end_id FROM read_runs WHERE agent_id = ?1 AND scope = ?2 AND start_ts = ?3 AND start_id = ?4",
  );
  const runsAcross = db.prepare<
    Run & { agent_id: string; scope: string },
    [string, string, string, number, string]
  >(
    `SELECT * FROM read_runs INDEXED BY read_runs_end
     WHERE scope IN (?1, ?2, ?3) AND (end_ts, end_id) > (?4, ?5) AND (start_ts, start_id) < (?4, ?5)`,
  );
  const latestEnd = db.prepare<{ end: number | null }, []>("SELECT MAX(end_ts) AS end FROM read_runs");
  const insertRun = db.prepare<unknown, [string, string, number, string, number, string]>(
    "INSERT INTO read_runs (agent_id, scope, start_ts, start_id, end_ts, end_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
  );
  const setRunEnd = db.prepare<unknown, [string, string, number, string, number, string]>(
    "UPDATE read_runs SET end_ts = ?5, end_id = ?6 WHERE agent_id = ?1 AND scope = ?2 AND start_ts = ?3 AND start_id = ?4",
  );
  const deleteRun = db.prepare<unknown, [string, string, number, string]>(
    "DELETE FROM read_runs WHERE agent_id = ?1 AND scope = ?2 AND start_ts = ?3 AND start_id = ?4",
  );
  const allowedMessage = db.prepare<
    { message_ts: number; id: string; source: string; channel_id: string },
    [string]
  >("SELECT message_ts, id, source, channel_id FROM messages WHERE id = ?1 AND allowlist_status = 'allowed'");
  const mark = db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3) ON CONFLICT (message_id, agent_id) DO NOTHING",
  );

  /** The agent's run of the scope that contains `k`, if any. */
  const covering = (agentId: string, scope: string, k: Key): Run | null => {
    const run = runAtOrBefore.get(agentId, scope, k.ts, k.id);
    return run && !after(k, { ts: run.end_ts, id: run.end_id }) ? run : null;
  };

  /** Adds a newly marked message to the agent's run of one scope, merging with its neighbours. */
  const addToRuns = (agentId: string, scope: Scope, k: Key): void => {
    const before = runAtOrBefore.get(agentId, scope.name, k.ts, k.id);
    const prev = neighbour(scope, "prev", k);
    const next = neighbour(scope, "next", k);
    const left = before && prev && before.end_ts === prev.ts && before.end_id === prev.id ? before : null;
    const right = next ? runStartingAt.get(agentId, scope.name, next.ts, next.id) : null;
    if (left && right) {
      deleteRun.run(agentId, scope.name, right.start_ts, right.start_id);
      setRunEnd.run(agentId, scope.name, left.start_ts, left.start_id, right.end_ts, right.end_id);
    } else if (left) {
      setRunEnd.run(agentId, scope.name, left.start_ts, left.start_id, k.ts, k.id);
    } else if (right) {
      deleteRun.run(agentId, scope.name, right.start_ts, right.start_id);
      insertRun.run(agentId, scope.name, k.ts, k.id, right.end_ts, right.end_id);
    } else {
      insertRun.run(agentId, scope.name, k.ts, k.id, k.ts, k.id);
    }
  };

  const rowsByIds = db.prepare<MessageRow, [string]>(ROWS_BY_IDS_SQL);

  const unread = (agentId: string, f: UnreadFilter): MessageRow[] => {
    const scope = scopeOfFilter(f);
    let pos: Key =
      f.sinceMs === null ? { ts: BEFORE_ALL_TIME, id: "" } : { ts: f.sinceMs, id: AFTER_ALL_IDS };
    const inRun = covering(agentId, scope.name, pos);
    if (inRun) pos = { ts: inRun.end_ts, id: inRun.end_id };
    const alsoSource = f.channelId !== null && f.source !== null;
    const params: Record<string, string | number> = { value: scope.value };
    if (alsoSource) params.source = f.source as string;
    const keys: Key[] = [];
    // Each round takes the keys between the position and the scope's next run (all unread), then jumps
    // over that run; between two runs there is at least one unread message of the scope, so `limit`
    // runs ahead are always enough for a page and are read in one query.
    let ahead: Run[] = [];
    while (keys.length < f.limit) {
      if (ahead.length === 0) ahead = runsAfter.all(agentId, scope.name, pos.ts, pos.id, f.limit + 1);
      const next = ahead.shift() ?? null;
      const want = f.limit - keys.length;
      const bound: Record<string, string | number> = next
        ? { end_ts: next.start_ts, end_id: next.start_id }
        : {};
      const gap = stmt<Key>(unreadCandidatesSql(scope.kind, alsoSource, next !== null)).all({
        ...params,
        ...bound,
        ts: pos.ts,
        id: pos.id,
        limit: want,
      });
      keys.push(...gap);
      if (!next || gap.length === want) break;
      pos = { ts: next.end_ts, id: next.end_id };
    }
    const order = new Map(keys.map((k, i) => [k.id, i]));
    return rowsByIds
      .all(JSON.stringify(keys.map((k) => k.id)))
      .sort((x, y) => (order.get(x.id) ?? 0) - (order.get(y.id) ?? 0));
  };

  return {
    unread,
    /** Marks the given ids read for the agent; returns the number of unique ids submitted. */
    markRead: (agentId: string, ids: readonly string[], now: number): number =>
      db
        .transaction(() => {
          const unique = [...new Set(ids)];
          for (const id of unique) {
            const m = allowedMessage.get(id);
            if (!m || mark.run(id, agentId, now).changes !== 1) continue;
            for (const scope of scopesOf(m)) addToRuns(agentId, scope, keyOf(m));
          }
          return unique.length;
        })
        .immediate(),
    /** Called right after an allowed message is stored: no run may cover it, as nobody has read it. */
    /** The latest end of any read run (null: none); a message stored after it cannot split a run. */
    latestRunEnd: (): number | null => latestEnd.get()?.end ?? null,
    splitRunsAt(m: { message_ts: number; id: string; source: string; channel_id: string }): void {
      const k = keyOf(m);
      const scopes = scopesOf(m);
      const [all, source, channel] = scopes.map((x) => x.name) as [string, string, string];
      for (const run of runsAcross.all(all, source, channel, k.ts, k.id)) {
        const scope = scopes.find((x) => x.name === run.scope) as Scope;
        const prev = neighbour(scope, "prev", k) as Key;
        const next = neighbour(scope, "next", k) as Key;
        setRunEnd.run(run.agent_id, scope.name, run.start_ts, run.start_id, prev.ts, prev.id);
        insertRun.run(run.agent_id, scope.name, next.ts, next.id, run.end_ts, run.end_id);
      }
    },
    /** Rebuilds an agent's runs from its read marks (repair, and bulk-loaded marks in benchmarks). */
    rebuildRuns: (agentId: string): void =>
      db
        .transaction(() => {
          db.run("DELETE FROM read_runs WHERE agent_id = ?1", [agentId]);
          const rows = db
            .query<{ ts: number; id: string; source: string; channel_id: string; is_read: number }, [string]>(
              `SELECT m.message_ts AS ts, m.id, m.source, m.channel_id, r.message_id IS NOT NULL AS is_read
               FROM messages m INDEXED BY messages_status_ts
               LEFT JOIN read_marks r ON r.message_id = m.id AND r.agent_id = ?1
               WHERE m.allowlist_status = 'allowed' ORDER BY m.message_ts, m.id`,
            )
            .iterate(agentId);
          const open = new Map<string, { start: Key; end: Key }>();
          const close = (name: string) => {
            const run = open.get(name);
            if (run) insertRun.run(agentId, name, run.start.ts, run.start.id, run.end.ts, run.end.id);
            open.delete(name);
          };
          for (const r of rows) {
            const k = { ts: r.ts, id: r.id };
            for (const scope of scopesOf(r)) {
              if (!r.is_read) close(scope.name);
              else {
                const run = open.get(scope.name);
                if (run) run.end = k;
                else open.set(scope.name, { start: k, end: k });
              }
            }
          }
          for (const name of [...open.keys()]) close(name);
        })
        .immediate(),
  };
}

export type ReadStore = ReturnType<typeof createReadStore>;
