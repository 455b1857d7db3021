/**
 * Child process of bench/discord/discord.ts: gw built as `gw serve` builds it, in the same order: loadConfig over
 * the GW_ variables of its environment, the pino logger (the day's log file at GW_LOG_LEVEL, default info, and
 * stderr), buildConnectors with the real Discord connector and its production tuning, createService,
 * prepare(), app.listen on 127.0.0.1 port 0, then start() (the connector logs in and catches up in the
 * background while the API answers).
 *
 *   bun run bench/discord/gw.ts
 *
 * It prints one line `{"ready":<port>, ...stamps}` once the Discord connector reports `ok` and, with
 * BENCH_EXPECT_STORED=n, once n community messages have been stored by this process (counted from the
 * outcomes of the ingest calls, so nothing polls the database). Stamps are this process's wall clock
 * (`performance.timeOrigin + performance.now()`): `process` (timeOrigin), `created` (createService
 * returned), `listening`, `start` (start() called), `ok` (connector healthy), `all` (n-th message stored).
 *
 * BENCH_UNPACED=1 lifts discord.js's pacing to Discord's 50 requests/s (DefaultRestOptions, before the
 * connector creates its Client; loads discord.js eagerly): gw's catch-up floor, which only a fake allows.
 * BENCH_TRACE=1 (latency phase) records, in memory so the hot path does no I/O:
 * - `dispatch`: when discord.js inside gw emitted the MESSAGE_CREATE dispatch on `client.ws`, the event
 *   gw's connector listens to (discord.js's WebSocketManager.prototype.emit is wrapped here, which also
 *   loads discord.js eagerly; nothing in src changes);
 * - `ingestBegun` / `ingested`: when the ingest call for the batch holding a message began and when its
 *   transaction returned (the ingest function the connector is started with is wrapped at the
 *   registry).
 * Commands (besides those of lib/child-protocol.ts): `stamps` → {dispatch, ingestBegun, ingested: [[text, t],
 * ...]},
 * `count` → community messages in the store, `deliveries` → [[delivery id, text], ...].
 */
import type { IngestBatch, IngestOutcome } from "../../src/ingest/ingest.ts";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";
import { serveLikeGw, serveSetup } from "../lib/gw-child.ts";

const tImported = now();
const TRACE = process.env.BENCH_TRACE === "1";
const dispatched: [string, number][] = [];
const ingested: [string, number][] = [];
const ingestBegun: [string, number][] = [];

if (process.env.BENCH_UNPACED === "1") {
  // Lifts discord.js's pacing to Discord's 50 requests/s for every client created from now on (the
  // connector's Client merges these defaults): gw's catch-up floor against a fake, which allows it.
  const { DefaultRestOptions } = await import("discord.js");
  (DefaultRestOptions as { globalRequestsPerSecond: number }).globalRequestsPerSecond = 1_000_000;
}
if (TRACE) {
  const { WebSocketManager } = await import("discord.js");
  const proto = WebSocketManager.prototype as unknown as {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
  };
  const original = proto.emit;
  proto.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
    if (event === "MESSAGE_CREATE")
      dispatched.push([String((args[0] as { content?: unknown }).content), now()]);
    return original.call(this, event, ...args);
  };
}

const setup = await serveSetup(process.env);
const expected = Number(setup.env.BENCH_EXPECT_STORED ?? 0);
let stored = 0;
/** Time spent inside ingest calls (their transactions), ms. */
let ingestMs = 0;
let tIngest = 0;
let tAll: number | null = null;
let allStored: () => void = () => {};
const allDone = new Promise<void>((resolve) => {
  allStored = resolve;
});
if (expected <= 0) allStored();

const trace = {
  before: (batch: IngestBatch) => {
    if (batch.source !== "community_chat") return;
    const t = now();
    tIngest = t;
    if (TRACE) for (const m of batch.messages) ingestBegun.push([m.text, t]);
  },
  after: (batch: IngestBatch, outcomes: IngestOutcome[]) => {
    if (batch.source !== "community_chat") return;
    const t = now();
    ingestMs += t - tIngest;
    for (const o of outcomes) if (o.status === "stored") stored += 1;
    if (TRACE) for (const m of batch.messages) ingested.push([m.text, t]);
    if (tAll === null && expected > 0 && stored >= expected) {
      tAll = t;
      allStored();
    }
  },
};

const marks = { created: 0, listening: 0, started: 0 };
const { svc, states } = await serveLikeGw(
  setup,
  { hostname: "127.0.0.1", port: 0 },
  { trace, mark: (step) => (marks[step] = now()) },
);
if (states().community_chat === "disabled")
  throw new Error("the Discord connector is not configured (GW_COMMUNITY_BOT_TOKEN)");
while (states().community_chat !== "ok") await Bun.sleep(1);
const tOk = now();
await allDone;

const count = () =>
  (
    svc.store.db.query("SELECT COUNT(*) AS n FROM messages WHERE source = 'community_chat'").get() as {
      n: number;
    }
  ).n;

emit({
  ready: svc.app.server?.port ?? 0,
  stamps: {
    process: performance.timeOrigin,
    imported: tImported,
    created: marks.created,
    listening: marks.listening,
    start: marks.listening,
    started: marks.started,
    ok: tOk,
    all: tAll,
  },
  stored,
  ingestMs,
  count: count(),
});

await serveCommands(
  async () => {
    await svc.app.stop();
    await svc.close();
  },
  (c) => {
    if (c.cmd === "stamps") return { dispatch: dispatched, ingestBegun, ingested };
    if (c.cmd === "count") return { n: count(), stored };
    if (c.cmd === "deliveries")
      return {
        rows: svc.store.db
          .query(
            "SELECT d.id AS delivery, m.text AS text FROM webhook_deliveries d JOIN messages m ON m.id = d.message_id",
          )
          .all(),
      };
    return { error: `unknown command ${c.cmd}` };
  },
);
