/**
 * bench/channels/channels.ts's correctness check of the read model against the messages themselves, before any
 * timing: for every agent, the whole list (store.channelList.page with no practical limit) must hold
 * exactly the channels with a visible message, each with its newest visible message_ts, newest first; and
 * every listed channel's unread_count must equal a direct COUNT of its allowed messages without a read
 * mark of that agent. Any difference throws (the benchmark fails) after printing the first ones.
 */
import { CHANNEL_PAGE_SQL } from "../../src/store/channel-list.ts";
import type { Store } from "../../src/store/store.ts";
import { percentile } from "../lib/stats.ts";
import { AGENTS, progress } from "./settings.ts";

export interface CheckResult {
  listed: number;
  phantomRows: number;
  /** Channels whose unread_count was compared, per agent (all listed ones). */
  compared: Record<string, number>;
  unreadTotal: Record<string, number>;
  /** Listed channels with 0 unread / some unread but not all / nothing read, per agent. */
  layout: Record<string, { fullyRead: number; partlyRead: number; unread: number }>;
  mismatches: number;
  ms: number;
}

const VISIBLE_SQL = `SELECT channel_id, max(message_ts) AS last, sum(allowlist_status = 'allowed') AS allowed
  FROM messages WHERE allowlist_status IN ('allowed', 'outbound') GROUP BY channel_id`;
const UNREAD_SQL = `SELECT count(*) AS n FROM messages m
  WHERE m.channel_id = ?1 AND m.allowlist_status = 'allowed'
    AND NOT EXISTS (SELECT 1 FROM read_marks r WHERE r.message_id = m.id AND r.agent_id = ?2)`;

type Visible = Map<string, { channel_id: string; last: number; allowed: number }>;

/** One agent's whole list against the messages; pushes what differs onto `problems`. */
function checkAgent(store: Store, agent: string, visible: Visible, problems: string[]) {
  const unread = store.db.query<{ n: number }, [string, string]>(UNREAD_SQL);
  const page = store.channelList.page({ agentId: agent, source: null, limit: 1_000_000_000 });
  if (page.length !== visible.size)
    problems.push(`${agent}: ${page.length} channels listed, ${visible.size} have a visible message`);
  const layout = { fullyRead: 0, partlyRead: 0, unread: 0 };
  let total = 0;
  let prev = Number.POSITIVE_INFINITY;
  for (const row of page) {
    const v = visible.get(row.channel_id);
    const n = unread.get(row.channel_id, agent)?.n ?? -1;
    if (!v) problems.push(`${agent}: ${row.channel_id} listed without a visible message`);
    else if (row.last_visible_at !== v.last)
      problems.push(
        `${agent}: ${row.channel_id} last_visible_at ${row.last_visible_at}, newest visible ${v.last}`,
      );
    if (prev < row.last_visible_at)
      problems.push(`${agent}: ${row.channel_id} listed after an older channel`);
    if (row.unread_count !== n)
      problems.push(`${agent}: ${row.channel_id} unread_count ${row.unread_count}, COUNT says ${n}`);
    prev = row.last_visible_at;
    total += n;
    if (n === 0) layout.fullyRead++;
    else if (n === v?.allowed) layout.unread++;
    else layout.partlyRead++;
  }
  unread.finalize();
  return { compared: page.length, total, layout };
}

export function checkCounts(store: Store): CheckResult {
  const t0 = performance.now();
  const visible: Visible = new Map(
    store.db
      .query<{ channel_id: string; last: number; allowed: number }, []>(VISIBLE_SQL)
      .all()
      .map((r) => [r.channel_id, r]),
  );
  const problems: string[] = [];
  const phantoms = store.db
    .query("SELECT count(*) AS n FROM channel_list WHERE last_visible_at IS NULL")
    .get();
  const out: CheckResult = {
    listed: visible.size,
    phantomRows: (phantoms as { n: number }).n,
    compared: {},
    unreadTotal: {},
    layout: {},
    mismatches: 0,
    ms: 0,
  };
  for (const agent of AGENTS) {
    const a = checkAgent(store, agent, visible, problems);
    out.compared[agent] = a.compared;
    out.unreadTotal[agent] = a.total;
    out.layout[agent] = a.layout;
  }
  out.mismatches = problems.length;
  out.ms = Math.round(performance.now() - t0);
  if (problems.length > 0) {
    for (const p of problems.slice(0, 20)) progress(`  MISMATCH ${p}`);
    throw new Error(
      `channel list check: ${problems.length} differences from the messages (first ones above)`,
    );
  }
  return out;
}

/**
 * The page's query plans (EXPLAIN QUERY PLAN details, one line each), unfiltered, by source, by person. The
 * statements are finalized: left cached on the connection (db.query), they made the later close()'s
 * checkpoint fail with SQLITE_LOCKED once the page itself had run on it (seen with Bun 1.4.5).
 */
export function pagePlans(store: Store): Record<string, string[]> {
  const plan = (filter: "all" | "source" | "person", params: Record<string, string | number | null>) => {
    const stmt = store.db.prepare<{ detail: string }, [Record<string, string | number | null>]>(
      `EXPLAIN QUERY PLAN ${CHANNEL_PAGE_SQL(filter)}`,
    );
    const rows = stmt.all({ $agent: "a", $limit: 100, ...params });
    stmt.finalize();
    return rows.map((r) => r.detail);
  };
  return {
    all: plan("all", {}),
    bySource: plan("source", { $source: "community_chat" }),
    byPerson: plan("person", { $person: "person-0", $source: null }),
  };
}

/** What was stored: messages by status, channels by what they hold, the busiest channel, the file size. */
export function storeStats(store: Store) {
  const q = <T>(sql: string) => store.db.query<T, []>(sql).all();
  const statuses = Object.fromEntries(
    q<{ s: string; n: number }>("SELECT allowlist_status AS s, count(*) AS n FROM messages GROUP BY 1").map(
      (r) => [r.s, r.n],
    ),
  );
  const perChannel = q<{ n: number }>(
    "SELECT count(*) AS n FROM messages GROUP BY channel_id ORDER BY 1",
  ).map((r) => r.n);
  const one = <T>(sql: string) => (store.db.query(sql).get() as { n: T }).n;
  return {
    statuses,
    channelsWithMessages: perChannel.length,
    messagesPerChannel: {
      min: perChannel[0] ?? 0,
      median: percentile(perChannel, 50),
      max: perChannel[perChannel.length - 1] ?? 0,
    },
    listRows: one<number>("SELECT count(*) AS n FROM channel_list"),
    readRows: one<number>("SELECT count(*) AS n FROM channel_reads"),
    named: one<number>("SELECT count(*) AS n FROM channel_list WHERE name != '' OR participants != '[]'"),
    dbBytes: one<number>("SELECT page_count * page_size AS n FROM pragma_page_count, pragma_page_size"),
  };
}
