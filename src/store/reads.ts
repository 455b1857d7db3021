/**
 * Per-agent read state. Read marks (message id, agent id, read time) are the record: one per pair, never
 * removed. So that unread stays fast however they are spread, each agent's marks are also kept as runs
 * (read-runs.ts): maximal intervals, in (message_ts, id) order, of allowed messages read, per scope (`*`,
 * `source:<s>`, `channel:<id>`). Invariant, per scope: an allowed message lies inside one of the agent's runs
 * of that scope exactly when the agent has marked it (ingest calls splitRunsAt in its transaction).
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";
import { BEFORE_ALL_TIME, type MessageRow } from "./messages.ts";
import { createRunTable, type Key, keyOf, type Run, SCOPE_WHERE, type Scope, scopesOf } from "./read-runs.ts";

export { RUN_AT_OR_BEFORE_SQL } from "./read-runs.ts";

export interface UnreadFilter {
  source: Source | null;
  channelId: string | null;
  /** Only messages with message_ts strictly greater (epoch ms). */
  sinceMs: number | null;
  limit: number;
}

/** Sorts after every message id at the same timestamp. */
const AFTER_ALL_IDS = "~";

/**
 * The allowed messages of a scope after a position and, when `bounded`, before the start of the agent's
 * next run: every one of them is unread. The scope's index walks the range; only the rows returned are
 * looked up (the page itself). Exported for the plan tests.
 */
export function unreadCandidatesSql(kind: Scope["kind"], alsoSource = false, bounded = false): string {
  const { index, where } = SCOPE_WHERE[kind];
  return `
    SELECT m.* FROM messages m INDEXED BY ${index}
    WHERE ${where} AND (m.message_ts, m.id) > ($ts, $id)${bounded ? " AND (m.message_ts, m.id) < ($end_ts, $end_id)" : ""}
      ${alsoSource ? "AND m.source = $source" : ""}
    ORDER BY m.message_ts, m.id LIMIT $limit`;
}

function scopeOfFilter(f: UnreadFilter): Scope {
  if (f.channelId !== null) return { kind: "channel", value: f.channelId, name: `channel:${f.channelId}` };
  if (f.source !== null) return { kind: "source", value: f.source, name: `source:${f.source}` };
  return { kind: "all", value: "", name: "*" };
}

type Candidates = { all(p: Record<string, string | number>): MessageRow[] };

/** The candidate queries, one per scope kind, source filter and boundedness, prepared once. */
function candidateStatements(
  db: Database,
): (kind: Scope["kind"], alsoSource: boolean, bounded: boolean) => Candidates {
  const cache = new Map<string, Candidates>();
  return (kind, alsoSource, bounded) => {
    const sql = unreadCandidatesSql(kind, alsoSource, bounded);
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare<MessageRow, [Record<string, string | number>]>(sql) as unknown as Candidates;
      cache.set(sql, s);
    }
    return s;
  };
}

export function createReadStore(db: Database) {
  const runs = createRunTable(db);
  const candidates = candidateStatements(db);
  const allowedMessage = db.prepare<
    { message_ts: number; id: string; source: string; channel_id: string },
    [string]
  >("SELECT message_ts, id, source, channel_id FROM messages WHERE id = ?1 AND allowlist_status = 'allowed'");
  const mark = db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3) ON CONFLICT (message_id, agent_id) DO NOTHING",
  );

  /**
   * Up to `limit` unread messages for the filter, in order, walking the runs of the filter's scope: at
   * most one round per message returned, however many messages are read.
   */
  const unreadRows = (agentId: string, f: UnreadFilter): MessageRow[] => {
    const scope = scopeOfFilter(f);
    let pos: Key =
      f.sinceMs === null ? { ts: BEFORE_ALL_TIME, id: "" } : { ts: f.sinceMs, id: AFTER_ALL_IDS };
    const inRun = runs.covering(agentId, scope.name, pos);
    if (inRun) pos = { ts: inRun.end_ts, id: inRun.end_id };
    const alsoSource = f.channelId !== null && f.source !== null;
    const params: Record<string, string | number> = { value: scope.value };
    if (alsoSource) params.source = f.source as string;
    const rows: MessageRow[] = [];
    // Each round takes the rows between the position and the scope's next run (all unread), then jumps
    // over that run; between two runs there is at least one unread message of the scope, so `limit`
    // runs ahead are always enough for a page and are read in one query.
    let ahead: Run[] = [];
    while (rows.length < f.limit) {
      if (ahead.length === 0) ahead = runs.startingAfter(agentId, scope.name, pos, f.limit + 1);
      const next = ahead.shift() ?? null;
      const want = f.limit - rows.length;
      const bound: Record<string, string | number> = next
        ? { end_ts: next.start_ts, end_id: next.start_id }
        : {};
      const gap = candidates(scope.kind, alsoSource, next !== null).all({
        ...params,
        ...bound,
        ts: pos.ts,
        id: pos.id,
        limit: want,
      });
      rows.push(...gap);
      if (!next || gap.length === want) break;
      pos = { ts: next.end_ts, id: next.end_id };
    }
    return rows;
  };

  return {
    unread: unreadRows,
    /** Marks the given ids read for the agent; returns the number of unique ids submitted. */
    markRead: (agentId: string, ids: readonly string[], now: number): number =>
      db
        .transaction(() => {
          const unique = [...new Set(ids)];
          for (const id of unique) {
            const m = allowedMessage.get(id);
            if (!m || mark.run(id, agentId, now).changes !== 1) continue;
            for (const scope of scopesOf(m)) runs.add(agentId, scope, keyOf(m));
          }
          return unique.length;
        })
        .immediate(),
    /** The latest end of any read run (null: none); a message stored after it cannot split a run. */
    latestRunEnd: (): number | null => runs.latestEnd(),
    /** Called right after an allowed message is stored: no run may cover it, as nobody has read it. */
    splitRunsAt: (m: { message_ts: number; id: string; source: string; channel_id: string }): void =>
      runs.splitAt(m),
    /** Rebuilds an agent's runs from its read marks (repair, and bulk-loaded marks in benchmarks). */
    rebuildRuns: (agentId: string): void => db.transaction(() => runs.rebuild(agentId)).immediate(),
  };
}

export type ReadStore = ReturnType<typeof createReadStore>;
