/**
 * The read state bench/store/store.ts measures unread() against: agent-a has read everything but
 * UNREAD_A allowed messages scattered over the history, agent-c all but one stale message and the newest,
 * agent-d all but the newest (agent-b reads nothing). Raw read marks in large transactions, turned into
 * read runs by the store's own rebuildRuns, as bulk-loaded marks bypass markRead.
 */
import type { Store } from "../../src/store/store.ts";
import { insertReadMarks } from "../lib/seed.ts";
import { elapsed } from "../lib/settings.ts";
import type { seedMessages } from "./seed.ts";
import { INSERT_CHUNK, ROWS, randInt, UNREAD_A } from "./settings.ts";

/** Read marks for `agent` on every allowed message except those in `unread`, then its read runs. */
function seedReads(
  store: Store,
  agent: string,
  allowed: Int32Array,
  allIds: readonly string[],
  unread: ReadonlySet<number>,
  at: number,
): number {
  const ids = function* () {
    for (const i of allowed) if (!unread.has(i)) yield allIds[i] as string;
  };
  return insertReadMarks(store, agent, ids(), at, INSERT_CHUNK);
}

/** The read state of agent-a, agent-c and agent-d (agent-b reads nothing; agent-m is the measure's). */
export function seedAgents(store: Store, s: ReturnType<typeof seedMessages>) {
  const { allIds, messageTs, statusOf } = s;
  const allowedList: number[] = [];
  for (let i = 0; i < ROWS; i++) if (statusOf[i] === 0) allowedList.push(i);
  const allowed = Int32Array.from(allowedList);
  // allowed, sorted by (message_ts, id): the order unread() walks.
  const allowedByTs = Int32Array.from(allowedList).sort((a, b) => {
    const d = (messageTs[a] ?? 0) - (messageTs[b] ?? 0);
    return d !== 0 ? d : (allIds[a] as string) < (allIds[b] as string) ? -1 : 1;
  });
  const readAt = s.endMs + 60_000;
  // agent-a: everything read but UNREAD_A allowed messages spread uniformly over the history, so the
  // floor (first unread) sits near the start and each unread call has to skip the read marks between.
  const tReads = performance.now();
  const unreadA = new Set<number>();
  while (unreadA.size < Math.min(UNREAD_A, allowed.length))
    unreadA.add(allowed[randInt(allowed.length)] as number);
  const marksA = seedReads(store, "agent-a", allowed, allIds, unreadA, readAt);
  // agent-c: the pathological layout: one old message (1% into the history) left unread, then
  // everything read except the newest UNREAD_A - 1: the floor is stuck at the old one.
  const unreadC = new Set<number>([allowedByTs[Math.floor(allowedByTs.length * 0.01)] as number]);
  for (let k = allowedByTs.length - 1; unreadC.size < UNREAD_A && k >= 0; k--)
    unreadC.add(allowedByTs[k] as number);
  const marksC = seedReads(store, "agent-c", allowed, allIds, unreadC, readAt);
  // agent-d: the in-order reader: everything read except the newest UNREAD_A (the floor's good case).
  const unreadD = new Set<number>();
  for (let k = allowedByTs.length - 1; unreadD.size < UNREAD_A && k >= 0; k--)
    unreadD.add(allowedByTs[k] as number);
  const marksD = seedReads(store, "agent-d", allowed, allIds, unreadD, readAt);
  const marks = { "agent-a": marksA, "agent-c": marksC, "agent-d": marksD };
  return { allowed, readAt, marks, readsMs: elapsed(tReads) };
}
