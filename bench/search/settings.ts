/**
 * bench/search/search.ts's settings (BENCH_ variables, read once at start-up), its fixed sizes and its one seeded
 * random stream: the world, the seeding, the ingest rounds and the query picks draw from it in that order,
 * so a run with the same settings stores and asks the same things.
 */
import { commonEnv, intEnv, progressLine, SEED } from "../lib/settings.ts";
import { mulberry32 } from "../lib/stats.ts";

export const ROWS = intEnv("BENCH_ROWS", 1_000_000, 10_000);
export const CHANNELS = intEnv("BENCH_CHANNELS", 10_000, 10);
export const VOCABULARY = intEnv("BENCH_VOCABULARY", 30_000, 1_000);
/** Zipf exponent of the words, in hundredths (100: s = 1.0, English-like). */
export const ZIPF_S = intEnv("BENCH_ZIPF_S100", 100, 1) / 100;
/** Timed requests per query case (and as many in-process calls). */
export const QUERIES = intEnv("BENCH_QUERIES", 300, 10);
export const { WARMUP } = commonEnv({ WARMUP: 50 });
/**
 * Messages ingested per round, per store (with the search index and the channel list, and without
 * either), in INGEST_BATCH batches.
 */
export const INGEST_ROUND = intEnv("BENCH_INGEST_ROUND", 10_000, 500);
export const INGEST_ROUNDS = intEnv("BENCH_INGEST_ROUNDS", 8, 1);
/** Messages ingested one per transaction (live traffic) per round, per store. */
export const INGEST_LIVE = intEnv("BENCH_INGEST_LIVE", 500, 0);
/** What-ifs, off by default: FTS5 automerge for the indexed store, page cache (MiB) of both ingest stores. */
export const FTS_AUTOMERGE = intEnv("BENCH_FTS_AUTOMERGE", 0, 0);
export const CACHE_MIB = intEnv("BENCH_CACHE_MIB", 0, 0);

export const INGEST_BATCH = 500;
export const INSERT_CHUNK = 50_000;
/** The first IMESSAGE_SHARE of the channels are iMessage ones, the rest Discord. */
export const IMESSAGE_SHARE = 0.6;
export const START_MS = Date.UTC(2024, 0, 1);
export const SPAN_MS = 2 * 365 * 86_400_000;
/** Shares of messages: outbound, from strangers (quarantined); of allowed ones later deleted. */
export const OUTBOUND_SHARE = 0.05;
export const STRANGER_SHARE = 0.15;
export const DELETED_SHARE = 0.01;
/**
 * Budgets: search p99 over HTTP, and ingest with the search index (and the channel list) kept in step
 * relative to the previous release's ingest, which kept neither, in catch-up batches.
 */
export const P99_BUDGET_MS = 10;
export const INGEST_RATIO_MIN = 0.9;
export const LIMIT = 20;

export const rng = mulberry32(SEED);
export const randInt = (n: number): number => Math.floor(rng() * n);
export const progress = progressLine("");
