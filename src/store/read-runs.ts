/**
 * The read runs of every agent (see reads.ts for the invariant): maximal intervals, per scope, of
 * allowed messages an agent has read. `add` extends or merges the runs a newly marked message belongs
 * to; `splitAt` cuts the runs a newly stored allowed message falls inside; `rebuild` derives an agent's
 * runs again from its read marks. Statements are prepared once; the caller holds the transaction.
 */
import type { Database } from "bun:sqlite";
import type { Source } from "../core/envelope.ts";

type ScopeKind = "all" | "source" | "channel";

/** A position in message order. */
export interface Key {
  ts: number;
  id: string;
}

export type Run = { start_ts: number; start_id: string; end_ts: number; end_id: string };
export type Scope = { kind: ScopeKind; value: string; name: string };

export const SCOPE_WHERE: Record<ScopeKind, { index: string; where: string }> = {
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

export const RUN_AT_OR_BEFORE_SQL = `
  SELECT start_ts, start_id, end_ts, end_id FROM read_runs
  WHERE agent_id = ?1 AND scope = ?2 AND (start_ts, start_id) <= (?3, ?4)
  ORDER BY start_ts DESC, start_id DESC LIMIT 1`;

export const after = (a: Key, b: Key) => a.ts > b.ts || (a.ts === b.ts && a.id > b.id);
export const keyOf = (m: { message_ts: number; id: string }): Key => ({ ts: m.message_ts, id: m.id });

export function scopesOf(m: { source: string; channel_id: string }): Scope[] {
  return [
    { kind: "all", value: "", name: "*" },
    { kind: "source", value: m.source, name: `source:${m.source}` },
    { kind: "channel", value: m.channel_id, name: `channel:${m.channel_id}` },
  ];
}

function neighbourSql(kind: ScopeKind, direction: "prev" | "next"): string {
  const { index, where } = SCOPE_WHERE[kind];
  const [op, order] = direction === "prev" ? ["<", "DESC"] : [">", "ASC"];
  return `
    SELECT m.message_ts AS ts, m.id FROM messages m INDEXED BY ${index}
    WHERE ${where} AND (m.message_ts, m.id) ${op} ($ts, $id)
    ORDER BY m.message_ts ${order}, m.id ${order} LIMIT 1`;
}

const REBUILD_SQL = `
  SELECT m.message_ts AS ts, m.id, m.source, m.channel_id, r.message_id IS NOT NULL AS is_read
  FROM messages m INDEXED BY messages_status_ts
  LEFT JOIN read_marks r ON r.message_id = m.id AND r.agent_id = ?1
  WHERE m.allowlist_status = 'allowed' ORDER BY m.message_ts, m.id`;

function runStatements(db: Database) {
  const neighbours = {
    prev: Object.fromEntries(
      (["all", "source", "channel"] as const).map((k) => [
        k,
        db.prepare<Key, [Record<string, string | number>]>(neighbourSql(k, "prev")),
      ]),
    ),
    next: Object.fromEntries(
      (["all", "source", "channel"] as const).map((k) => [
        k,
        db.prepare<Key, [Record<string, string | number>]>(neighbourSql(k, "next")),
      ]),
    ),
  };
  return {
    neighbour: (scope: Scope, direction: "prev" | "next", k: Key): Key | null =>
      neighbours[direction][scope.kind]?.get({ value: scope.value, ts: k.ts, id: k.id }) ?? null,
    atOrBefore: db.prepare<Run, [string, string, number, string]>(RUN_AT_OR_BEFORE_SQL),
    after: db.prepare<Run, [string, string, number, string, number]>(
      `SELECT start_ts, start_id, end_ts, end_id FROM read_runs
       WHERE agent_id = ?1 AND scope = ?2 AND (start_ts, start_id) > (?3, ?4) ORDER BY start_ts, start_id LIMIT ?5`,
    ),
    startingAt: db.prepare<Run, [string, string, number, string]>(
      "SELECT start_ts, start_id, end_ts, end_id FROM read_runs WHERE agent_id = ?1 AND scope = ?2 AND start_ts = ?3 AND start_id = ?4",
    ),
    across: db.prepare<Run & { agent_id: string; scope: string }, [string, string, string, number, string]>(
      `SELECT * FROM read_runs INDEXED BY read_runs_end
       WHERE scope IN (?1, ?2, ?3) AND (end_ts, end_id) > (?4, ?5) AND (start_ts, start_id) < (?4, ?5)`,
    ),
    latestEnd: db.prepare<{ end: number | null }, []>("SELECT MAX(end_ts) AS end FROM read_runs"),
    insert: db.prepare<unknown, [string, string, number, string, number, string]>(
      "INSERT INTO read_runs (agent_id, scope, start_ts, start_id, end_ts, end_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    ),
    setEnd: db.prepare<unknown, [string, string, number, string, number, string]>(
      "UPDATE read_runs SET end_ts = ?5, end_id = ?6 WHERE agent_id = ?1 AND scope = ?2 AND start_ts = ?3 AND start_id = ?4",
    ),
    remove: db.prepare<unknown, [string, string, number, string]>(
      "DELETE FROM read_runs WHERE agent_id = ?1 AND scope = ?2 AND start_ts = ?3 AND start_id = ?4",
    ),
    removeAgent: db.prepare<unknown, [string]>("DELETE FROM read_runs WHERE agent_id = ?1"),
    rebuildRows: db.prepare<
      { ts: number; id: string; source: Source; channel_id: string; is_read: number },
      [string]
    >(REBUILD_SQL),
  };
}

export function createRunTable(db: Database) {
  const q = runStatements(db);

  /** Adds a newly marked message to the agent's run of one scope, merging with its neighbours. */
  const add = (agentId: string, scope: Scope, k: Key): void => {
    const before = q.atOrBefore.get(agentId, scope.name, k.ts, k.id);
    const prev = q.neighbour(scope, "prev", k);
    const next = q.neighbour(scope, "next", k);
    const left = before && prev && before.end_ts === prev.ts && before.end_id === prev.id ? before : null;
    const right = next ? q.startingAt.get(agentId, scope.name, next.ts, next.id) : null;
    if (left && right) {
      q.remove.run(agentId, scope.name, right.start_ts, right.start_id);
      q.setEnd.run(agentId, scope.name, left.start_ts, left.start_id, right.end_ts, right.end_id);
    } else if (left) {
      q.setEnd.run(agentId, scope.name, left.start_ts, left.start_id, k.ts, k.id);
    } else if (right) {
      q.remove.run(agentId, scope.name, right.start_ts, right.start_id);
      q.insert.run(agentId, scope.name, k.ts, k.id, right.end_ts, right.end_id);
    } else {
      q.insert.run(agentId, scope.name, k.ts, k.id, k.ts, k.id);
    }
  };

  /** Cuts every run a newly stored allowed message falls inside, around that message. */
  const splitAt = (m: { message_ts: number; id: string; source: string; channel_id: string }): void => {
    const k = keyOf(m);
    const scopes = scopesOf(m);
    const [all, source, channel] = scopes.map((x) => x.name) as [string, string, string];
    for (const run of q.across.all(all, source, channel, k.ts, k.id)) {
      const scope = scopes.find((x) => x.name === run.scope) as Scope;
      const prev = q.neighbour(scope, "prev", k) as Key;
      const next = q.neighbour(scope, "next", k) as Key;
      q.setEnd.run(run.agent_id, scope.name, run.start_ts, run.start_id, prev.ts, prev.id);
      q.insert.run(run.agent_id, scope.name, next.ts, next.id, run.end_ts, run.end_id);
    }
  };

  /** The agent's runs derived again from its read marks, in one pass over the allowed messages. */
  const rebuild = (agentId: string): void => {
    q.removeAgent.run(agentId);
    const open = new Map<string, { start: Key; end: Key }>();
    const close = (name: string) => {
      const run = open.get(name);
      if (run) q.insert.run(agentId, name, run.start.ts, run.start.id, run.end.ts, run.end.id);
      open.delete(name);
    };
    for (const r of q.rebuildRows.iterate(agentId)) {
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
  };

  return {
    add,
    splitAt,
    rebuild,
    /** The agent's run of the scope that contains `k`, if any. */
    covering(agentId: string, scope: string, k: Key): Run | null {
      const run = q.atOrBefore.get(agentId, scope, k.ts, k.id);
      return run && !after(k, { ts: run.end_ts, id: run.end_id }) ? run : null;
    },
    /** Up to `n` of the agent's runs of a scope that start after `k`, in order. */
    startingAfter: (agentId: string, scope: string, k: Key, n: number): Run[] =>
      q.after.all(agentId, scope, k.ts, k.id, n),
    latestEnd: (): number | null => q.latestEnd.get()?.end ?? null,
  };
}
