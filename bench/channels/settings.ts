/**
 * bench/channels/channels.ts's settings (BENCH_ variables, read once at start-up) and fixed sizes. The message
 * count (BENCH_ROWS), the first messages through ingest (BENCH_INGEST_ROWS), the seed (BENCH_SEED) and
 * the one seeded random stream are store/settings.ts's, as its seeding code is reused.
 */
import type { Source } from "../../src/core/envelope.ts";
import { commonEnv, intEnv, progressLine, ROUTE_CASE_DEFAULTS } from "../lib/settings.ts";
import type { WorldShape } from "../lib/world.ts";

export const CHANNELS = intEnv("BENCH_CHANNELS", 10_000, 10);
/** Timed requests (and in-process page calls) per case and target. */
export const { REQUESTS, WARMUP, QUIET_WAIT_S } = commonEnv(ROUTE_CASE_DEFAULTS);
/** Parallel connections of the concurrent run. */
export const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 8, 1);
/** Messages ingested into each copy (with and without the channel-list upkeep, upkeep.ts). */
export const UPKEEP_ROWS = intEnv("BENCH_UPKEEP_ROWS", 50_000, 1_000);

/** The issue's budget: GET /channels p99 at 1,000,000 messages in 10,000 channels. */
export const BUDGET_P99_MS = 10;

/**
 * 10,000 channels, 60% iMessage (every fourth a group) and 40% Discord (every fifth a DM); Zipf traffic
 * (s = 1); every hundredth channel hears only from strangers, so it holds only quarantined messages.
 */
export const SHAPE: WorldShape = {
  channels: CHANNELS,
  imessageChannels: Math.round(CHANNELS * 0.6),
  zipf: 1,
  cast: { known: 150, strangers: 400, persons: 120 },
  strangersOnly: (i) => i % 100 === 99,
};

/** The agents: one with reads in every channel, one with reads in a tenth of them, one with none. */
export const READER = "agent-reader";
export const LIGHT = "agent-light";
export const NONE = "agent-none";
export const AGENTS = [READER, LIGHT, NONE] as const;
/** Ids per markRead call (an agent marks what one unread page gave it). */
export const MARK_BATCH = 100;
/** A channel is read fully only up to this many allowed messages; bigger ones are read partly. */
export const FULL_READ_MAX = 30;

export interface Case {
  name: string;
  agent: string;
  source: Source | null;
  /** GET /channels?person_id= (beyond extensions.md): a person's one-to-one channels. */
  personId?: string;
  limit: number;
}

/** The requests timed over HTTP and, as store.channelList.page, in-process. */
export const CASES: readonly Case[] = [
  { name: "limit 100, agent-reader", agent: READER, source: null, limit: 100 },
  { name: "limit 100, agent-none", agent: NONE, source: null, limit: 100 },
  { name: "limit 500, agent-reader", agent: READER, source: null, limit: 500 },
  { name: "limit 500, agent-none", agent: NONE, source: null, limit: 500 },
  { name: "source=device_messenger, agent-reader", agent: READER, source: "device_messenger", limit: 100 },
  { name: "source=community_chat, agent-reader", agent: READER, source: "community_chat", limit: 100 },
  // person ids repeat every 120 allowlist entries, so person-0 wrote last in about 1 DM of 120.
  { name: "person_id=person-0, agent-reader", agent: READER, source: null, personId: "person-0", limit: 100 },
];

/** What a case asks store.channelList.page for. */
export const pageQuery = (c: Case) => ({
  agentId: c.agent,
  source: c.source,
  personId: c.personId ?? null,
  limit: c.limit,
});

/** The path a case requests (the route's default limit is 100, so it is left out then). */
export function casePath(c: Case): string {
  const q = [
    c.source ? `source=${c.source}` : "",
    c.personId ? `person_id=${c.personId}` : "",
    c.limit !== 100 ? `limit=${c.limit}` : "",
  ].filter(Boolean);
  return `/channels${q.length > 0 ? `?${q.join("&")}` : ""}`;
}

export const progress = progressLine("");
