/**
 * bench/events/events.ts's settings (BENCH_ variables, read once at start-up), the issue's budgets, the world
 * seeded (allowed friends and one stranger) and the GET /events cases timed.
 */
import { commonEnv, intEnv, progressLine, ROUTE_CASE_DEFAULTS } from "../lib/settings.ts";

/** Events stored (edits, reactions, deletes), through ingest. */
export const EVENTS = intEnv("BENCH_EVENTS", 100_000, 1_000);
/** Messages the events are about, through ingest. */
export const MESSAGES = intEnv("BENCH_EVENT_MESSAGES", 20_000, 500);
/** Timed requests per case and target, and untimed ones before them. */
export const { REQUESTS, WARMUP, QUIET_WAIT_S } = commonEnv(ROUTE_CASE_DEFAULTS);
/** chat.db rows under `gw serve` for the idle CPU part (0 skips that part). */
export const CHATDB_ROWS = intEnv("BENCH_CHATDB_ROWS", 100_000, 0);
/** Rows dated within the last 16 minutes (the edit re-check's range), and how many of them are edited. */
export const RECENT_ROWS = 300;
export const EDITED_ROWS = 30;
export const { IDLE_S } = commonEnv({ IDLE_S: 60 });
/** After gw has caught up with chat.db (its CPU quiet), before the window. */
export const SETTLE_S = intEnv("BENCH_IDLE_SETTLE_S", 20, 0);

/** The issue's budgets: GET /events p99 at 100,000 events; idle CPU with the edit check on 100,000 rows. */
export const BUDGET_P99_MS = 5;
export const BUDGET_IDLE_PCT = 0.15;

export const AGENT = "agent-events";
export const FRIENDS = Array.from({ length: 20 }, (_, i) => `+1555555${String(200 + i).padStart(4, "0")}`);
export const STRANGER = "+15555550999";
/** Every STRANGER_EVERY-th message is the stranger's (quarantined: its events are stored, never shown). */
export const STRANGER_EVERY = 20;
/** Every DELETE_EVERY-th change is a delete (of a message no other change touches). */
export const DELETE_EVERY = 50;

export const ALLOWLIST_TOML = FRIENDS.map(
  (id, i) =>
    `[[entry]]\nsource = "device_messenger"\nid = "${id}"\nperson_id = "person-${i}"\ndisplay_name = "Friend ${i}"\n`,
).join("\n");

export interface Case {
  name: string;
  /** Where the cursor is: none, the middle of the visible events, or 50 before the newest. */
  at: "start" | "middle" | "end";
  /** null: the route's default (20). */
  limit: number | null;
}

export const CASES: readonly Case[] = [
  { name: "first page, no cursor, default limit", at: "start", limit: null },
  { name: "first page, no cursor, limit 100", at: "start", limit: 100 },
  { name: "cursor in the middle, default limit", at: "middle", limit: null },
  { name: "cursor in the middle, limit 100", at: "middle", limit: 100 },
  { name: "cursor 50 before the newest, default limit", at: "end", limit: null },
  { name: "cursor 50 before the newest, limit 100", at: "end", limit: 100 },
];

/** The cursors the cases use, from the seeded visible events. */
export interface Cursors {
  start: string;
  middle: string;
  end: string;
}

export function casePath(c: Case, cursors: Cursors): string {
  const q = [cursors[c.at] ? `since=${cursors[c.at]}` : "", c.limit === null ? "" : `limit=${c.limit}`];
  const s = q.filter(Boolean).join("&");
  return `/events${s ? `?${s}` : ""}`;
}

export const progress = progressLine("");
