/**
 * Bounded under faults (extensions.md §4), the long form on a real `gw serve` logged in (real discord.js) to
 * the fake Discord in this process: an allowlisted author posts RATE_PER_S messages a second across
 * CHANNELS channels, one in FILE_EVERY with a small file; after a warm-up the store fails (file-size limit
 * 0, rlimit.ts) for `faultS`, the stream goes on, the limit comes back, the stream goes on `tailS` more.
 * gw serve's RSS and /healthz are sampled every SAMPLE_EVERY_MS throughout (community-queue-probes.ts). It
 * holds (community-queue-report.ts) when every posted message is stored exactly once, with its file (live,
 * or refilled from Discord's history), RSS stays within RSS_GROWTH_MAX_MB of the warm-up, and health says
 * `degraded` with at most GW_COMMUNITY_QUEUE_MAX held, then `ok`. `bun run faults community-queue` runs
 * FULL (a 30 s fault, bound 1000); test/e2e/faults-community-queue.test.ts runs SHORT (6 s, bound 150).
 * Linux only (prlimit, /proc): elsewhere the run says why it was not run.
 */
import { type FakeDiscord, type FakeUser, startFakeDiscord } from "../../../src/demo/fake-discord/server.ts";
import { type Phase, type Posted, sampler, storedOf, stream } from "./community-queue-probes.ts";
import {
  type CommunityQueueDetails,
  healthOf,
  notesOf,
  rowsOf,
  rssOf,
  type Scenario,
} from "./community-queue-report.ts";
import { entry, type Gw, type LogLine, startGw, waitFor, workDir } from "./harness.ts";
import { type FileSizeLimiter, fileSizeLimiter } from "./rlimit.ts";
import type { FaultRun } from "./types.ts";

export type { CommunityQueueDetails } from "./community-queue-report.ts";

export const RATE_PER_S = 100;
export const CHANNELS = 4;
export const FILE_EVERY = 5;
export const FILE_BYTES = 2_048;
export const RSS_GROWTH_MAX_MB = 150;
export const SAMPLE_EVERY_MS = 250;

export interface CommunityQueueOptions {
  warmUpS: number;
  faultS: number;
  tailS: number;
  /** GW_COMMUNITY_QUEUE_MAX */
  queueMax: number;
  /** GW_COMMUNITY_CATCHUP_MAX_MESSAGES: room to refill every channel. */
  catchUpMax: number;
  /** Deadline for everything stored (and health ok) once the stream stops. */
  settleMs: number;
}

export const FULL: CommunityQueueOptions = {
  warmUpS: 5,
  faultS: 30,
  tailS: 5,
  queueMax: 1_000,
  catchUpMax: 5_000,
  settleMs: 120_000,
};
/** The CI form: a shorter fault, and a bound low enough to be reached early in it. */
export const SHORT: CommunityQueueOptions = {
  warmUpS: 2,
  faultS: 6,
  tailS: 1,
  queueMax: 150,
  catchUpMax: 5_000,
  settleMs: 60_000,
};

const CI_NOTE = `CI runs the same with a ${SHORT.faultS} s fault and the bound at ${SHORT.queueMax} (test/e2e/faults-community-queue.test.ts).`;

const scenarioOf = (o: CommunityQueueOptions): Scenario => ({
  ratePerS: RATE_PER_S,
  channels: CHANNELS,
  fileEvery: FILE_EVERY,
  fileBytes: FILE_BYTES,
  rssGrowthMaxMb: RSS_GROWTH_MAX_MB,
  sampleEveryMs: SAMPLE_EVERY_MS,
  warmUpS: o.warmUpS,
  faultS: o.faultS,
  tailS: o.tailS,
  queueMax: o.queueMax,
  catchUpMax: o.catchUpMax,
});

const communityState = async (gw: Gw) =>
  ((await gw.health()).body?.connectors as Record<string, { state: string }> | undefined)?.community_chat
    ?.state ?? "?";

const untilOk = (gw: Gw, what: string, timeoutMs: number) =>
  waitFor(async () => ((await communityState(gw)) === "ok" ? true : undefined), what, timeoutMs);

/** gw's "not re-hosted" warnings by reason (paths left out). */
function notRehosted(logs: readonly LogLine[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of logs.filter((x) => x.msg.startsWith("Discord attachment not re-hosted"))) {
    const reason = String(l.reason ?? "?").replace(/'[^']*'/g, "<path>");
    out[reason] = (out[reason] ?? 0) + 1;
  }
  return out;
}

/**
 * The stream through its phases: warm-up, the limit at 0 for `faultS`, the limit back, the tail; then
 * (deadline-bounded) every message stored and community_chat ok again.
 */
async function drive(
  live: Gw,
  o: CommunityQueueOptions,
  world: { fake: FakeDiscord; ann: FakeUser; channels: { id: string }[] },
  limiter: FileSizeLimiter,
  onLimit: (limited: boolean, halt: () => void) => void,
) {
  const warmUp = o.warmUpS * RATE_PER_S;
  const faultEnd = warmUp + o.faultS * RATE_PER_S;
  const total = faultEnd + o.tailS * RATE_PER_S;
  const posted: Posted[] = [];
  const data = "x".repeat(FILE_BYTES);
  let phase: Phase = "warm-up";
  const s = stream(total, RATE_PER_S, (i) => {
    const file = i % FILE_EVERY === 0;
    const m = world.fake.message((world.channels[i % CHANNELS] as { id: string }).id, {
      author: world.ann,
      content: `cq ${i}`,
      ...(file ? { attachments: [{ filename: `f${i}.txt`, contentType: "text/plain", data }] } : {}),
    });
    posted.push({ id: String(m.id), i, file });
  });
  onLimit(false, s.stop);
  const sampling = sampler(live, s.t0, SAMPLE_EVERY_MS, () => phase);
  const reach = (n: number, what: string) =>
    waitFor(() => (s.posted() >= n ? true : undefined), what, (n / RATE_PER_S) * 1000 + 20_000);

  await reach(warmUp, "the warm-up");
  limiter.limit(live.pid, 0);
  onLimit(true, s.stop);
  phase = "fault";
  const faultFrom = s.posted();
  const faultAt = performance.now();
  await reach(faultEnd, "the fault's messages");
  limiter.restore(live.pid);
  onLimit(false, s.stop);
  const back = performance.now();
  const postedDuringFault = s.posted() - faultFrom;
  phase = "tail";
  await s.finished;
  const ended = performance.now();
  phase = "settle";
  const all = () => (storedOf(live, posted, FILE_BYTES).lost === 0 ? true : undefined);
  await waitFor(all, `all ${total} messages stored`, o.settleMs, SAMPLE_EVERY_MS);
  const storedAt = performance.now();
  await untilOk(live, "community_chat ok", o.settleMs);
  const okAt = performance.now();
  // One sample taken once settled: RSS "once all was stored".
  await waitFor(() => (sampling.samples.some((x) => x.at > okAt - s.t0) ? true : undefined), "a sample");
  sampling.stop();
  return {
    posted,
    postedDuringFault,
    faultMs: back - faultAt,
    storedAllMs: storedAt - back,
    storedAfterStreamMs: storedAt - ended,
    okAfterMs: okAt - back,
    samples: sampling.samples,
  };
}

export async function communityQueueFaults(
  o: CommunityQueueOptions = FULL,
): Promise<FaultRun<CommunityQueueDetails>> {
  const limiter = fileSizeLimiter();
  if ("unavailable" in limiter) {
    const reason = `not run here: ${limiter.unavailable}`;
    return {
      rows: [
        { tried: `Discord store failing ${o.faultS} s under a stream`, times: 0, held: reason, ok: true },
      ],
      notes: [],
      details: { skipped: reason, scenario: scenarioOf(o) } as CommunityQueueDetails,
    };
  }
  const work = workDir("community-queue");
  const fake: FakeDiscord = await startFakeDiscord();
  let gw: Gw | null = null;
  let limited = false;
  let halt = () => {};
  try {
    const ann = fake.user({ username: "ann_user", global_name: "Ann" });
    const guild = fake.guild({ name: "Busy" });
    const channels = Array.from({ length: CHANNELS }, (_, i) =>
      fake.channel(guild.id, { name: `busy-${i}` }),
    );
    gw = await startGw({
      dir: work.dir,
      env: {
        GW_COMMUNITY_BOT_TOKEN: "fake-bot-token",
        GW_COMMUNITY_API_URL: fake.apiUrl,
        GW_COMMUNITY_QUEUE_MAX: String(o.queueMax),
        GW_COMMUNITY_CATCHUP_MAX_MESSAGES: String(o.catchUpMax),
      },
      allowlist: entry("community_chat", ann.id, "ann"),
    });
    const live = gw;
    await untilOk(live, "Discord ready", 20_000);
    const run = await drive(live, o, { fake, ann, channels }, limiter, (l, h) => {
      limited = l;
      halt = h;
    });
    const counts = storedOf(live, run.posted, FILE_BYTES);
    const integrity = live.db(
      (db) => (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check,
    );
    const logs = live.logs();
    const stateAfter = await communityState(live);
    const exitCode = await live.stop();
    const details: CommunityQueueDetails = {
      skipped: null,
      scenario: scenarioOf(o),
      ...run,
      posted: run.posted.length,
      ...counts,
      files: { ...counts.files, notRehosted: notRehosted(logs) },
      rss: rssOf(run.samples, o.queueMax),
      health: healthOf(run.samples, stateAfter),
      catchUpSkipped: logs.filter((l) => l.msg.startsWith("catch-up bound reached")).length,
      integrity,
      exitCode,
    };
    return { rows: rowsOf(details), notes: [notesOf(details, limiter.how, CI_NOTE)], details };
  } finally {
    halt();
    if (gw && limited) limiter.restore(gw.pid);
    await gw?.stop();
    await fake.stop();
    work.remove();
  }
}
