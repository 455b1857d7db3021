/**
 * The community-queue run's figures and verdicts (community-queue.ts): the RSS and health summaries of
 * its samples, and its evidence rows and note. Pure: everything comes in through the details, the
 * scenario's constants included, so each row says what it was judged against.
 */
import type { Phase, Sample } from "./community-queue-probes.ts";
import { row } from "./types.ts";

export interface Scenario {
  ratePerS: number;
  channels: number;
  fileEvery: number;
  fileBytes: number;
  rssGrowthMaxMb: number;
  sampleEveryMs: number;
  warmUpS: number;
  faultS: number;
  tailS: number;
  /** GW_COMMUNITY_QUEUE_MAX */
  queueMax: number;
  /** GW_COMMUNITY_CATCHUP_MAX_MESSAGES */
  catchUpMax: number;
}

export interface CommunityQueueDetails {
  skipped: string | null;
  scenario: Scenario;
  posted: number;
  postedDuringFault: number;
  faultMs: number;
  stored: number;
  lost: number;
  duplicates: number;
  files: {
    posted: number;
    kept: number;
    /** Stream places of the messages stored without their file. */
    missing: number[];
    /** gw's "not re-hosted" warnings, by reason. */
    notRehosted: Record<string, number>;
  };
  rss: ReturnType<typeof rssOf>;
  health: ReturnType<typeof healthOf>;
  /** From the limit's restoration. */
  storedAllMs: number;
  /** From the stream's last message. */
  storedAfterStreamMs: number;
  okAfterMs: number;
  catchUpSkipped: number;
  integrity: string;
  exitCode: number;
  samples: Sample[];
}

const max = (xs: readonly number[]) => (xs.length === 0 ? Number.NaN : Math.max(...xs));

/** Baseline: the last sample before the fault; peak: from the fault on (the refill too); after: the last. */
export function rssOf(samples: readonly Sample[], queueMax: number) {
  const warm = samples.filter((x) => x.phase === "warm-up");
  const later = samples.filter((x) => x.phase !== "warm-up");
  const atBound = later.find((x) => x.held !== null && x.held >= queueMax);
  const peak = later.reduce<Sample | null>((a, x) => (a === null || x.rssMb > a.rssMb ? x : a), null);
  return {
    baselineMb: warm.at(-1)?.rssMb ?? Number.NaN,
    warmUpMaxMb: max(warm.map((x) => x.rssMb)),
    /** The first sample that saw the bound held. */
    atBoundMb: atBound?.rssMb ?? null,
    faultPeakMb: max(later.filter((x) => x.phase === "fault").map((x) => x.rssMb)),
    peakMb: peak?.rssMb ?? Number.NaN,
    peakPhase: (peak?.phase ?? "fault") as Phase,
    /** Once everything was stored and health was ok. */
    afterMb: samples.at(-1)?.rssMb ?? Number.NaN,
  };
}

export function healthOf(samples: readonly Sample[], stateAfter: string) {
  const fault = samples.filter((x) => x.phase === "fault");
  const first = fault.findIndex((x) => x.state === "degraded");
  const failing = samples.filter((x) => x.held !== null);
  const fullest = [...failing].sort((a, b) => (b.dropped ?? 0) - (a.dropped ?? 0))[0];
  return {
    degradedDuringFault: first >= 0,
    /** Fault samples after the first `degraded` that said anything else. */
    notDegradedAfterFirst: first < 0 ? 0 : fault.slice(first).filter((x) => x.state !== "degraded").length,
    maxHeld: max(failing.map((x) => x.held ?? 0)),
    /** Dropped past the bound by the end of the fault, and in all (the tail too, until storing resumed). */
    droppedDuringFault: max(fault.map((x) => x.dropped ?? 0)),
    maxDropped: max(failing.map((x) => x.dropped ?? 0)),
    degradedDetail: fullest?.detail ?? "",
    stateAfter,
  };
}

const mb = (n: number) => `${n.toFixed(1)} MB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** What holding everything would have held; roughly what one held message cost (RSS at the bound). */
function unbounded(d: CommunityQueueDetails): string {
  const { queueMax } = d.scenario;
  const held = `unbounded, all ${d.postedDuringFault} messages posted while failing would have been held with their downloads (${(d.postedDuringFault / queueMax).toFixed(1)}× the bound)`;
  if (d.rss.atBoundMb === null || d.rss.atBoundMb <= d.rss.baselineMb) return held;
  const perKb = ((d.rss.atBoundMb - d.rss.baselineMb) * 1024) / queueMax;
  return `${held}; roughly ${perKb.toFixed(1)} KB per held message (RSS at the bound less the baseline)`;
}

function missingText(f: CommunityQueueDetails["files"]): string {
  if (f.missing.length === 0) return "";
  const reasons = Object.entries(f.notRehosted)
    .map(([r, n]) => `${n}× "${r}"`)
    .join(", ");
  return `; stored without it: ${f.missing.length} messages, stream places ${f.missing[0]}–${f.missing.at(-1)}; gw's "not re-hosted" warnings: ${reasons || "none"}`;
}

export function rowsOf(d: CommunityQueueDetails) {
  const { scenario: o, rss, health: h } = d;
  const growth = rss.peakMb - rss.baselineMb;
  const what = `Discord store failing ${o.faultS} s (file-size limit 0) under ${o.ratePerS} msg/s in ${o.channels} channels, GW_COMMUNITY_QUEUE_MAX=${o.queueMax}`;
  const peakWhen =
    rss.peakPhase === "settle" ? "after the stream, during the refill" : `in the ${rss.peakPhase}`;
  return [
    row(
      `${what}: every message stored`,
      d.posted,
      `${d.stored} of ${d.posted} posted messages stored, ${d.lost} lost, ${d.duplicates} twice (${d.postedDuringFault} posted while storing failed; ${h.droppedDuringFault} dropped past the bound by the end of the fault, ${h.maxDropped} in all until storing resumed, refilled from history); all stored ${secs(d.storedAllMs)} after the limit came back (${secs(d.storedAfterStreamMs)} after the stream's last message); ${d.catchUpSkipped} catch-up bound warnings; integrity_check ${d.integrity}; exit ${d.exitCode}`,
      {
        "none lost": d.lost === 0 && d.stored === d.posted,
        "none twice": d.duplicates === 0,
        "the bound was reached": h.maxDropped > 0,
        "integrity ok": d.integrity === "ok",
        "clean exit": d.exitCode === 0,
      },
    ),
    row(
      `${what}: gw serve's RSS`,
      d.samples.length,
      `baseline ${mb(rss.baselineMb)} (warm-up max ${mb(rss.warmUpMaxMb)}); ${rss.atBoundMb === null ? "the bound never seen" : `${mb(rss.atBoundMb)} when ${o.queueMax} were held`}, peak ${mb(rss.faultPeakMb)} during the fault; peak ${mb(rss.peakMb)} in all (${peakWhen}; +${mb(growth)}, allowed +${o.rssGrowthMaxMb} MB); ${mb(rss.afterMb)} once all was stored; ${unbounded(d)}`,
      { [`peak within +${o.rssGrowthMaxMb} MB`]: growth <= o.rssGrowthMaxMb },
    ),
    row(
      `${what}: /healthz`,
      d.samples.filter((x) => x.phase === "fault").length,
      `community_chat degraded during the fault ("${h.degradedDetail}"), at most ${h.maxHeld} held (bound ${o.queueMax}); ok again ${secs(d.okAfterMs)} after the limit came back`,
      {
        "degraded while failing": h.degradedDuringFault && h.notDegradedAfterFirst === 0,
        "held within the bound": h.maxHeld <= o.queueMax,
        "ok after": h.stateAfter === "ok",
      },
    ),
    row(
      `${what}: the messages' files (${o.fileBytes} bytes, one message in ${o.fileEvery})`,
      d.files.posted,
      `${d.files.kept} of ${d.files.posted} stored with their file (in the database, on disk, whole)${missingText(d.files)}`,
      { "every file kept": d.files.kept === d.files.posted },
    ),
  ];
}

export function notesOf(d: CommunityQueueDetails, how: string, ci: string): string {
  const o = d.scenario;
  return `Discord queue bound: gw serve logged in to the fake Discord; an allowlisted author posts ${o.ratePerS} messages a second round-robin over ${o.channels} channels, one in ${o.fileEvery} with a ${o.fileBytes}-byte file; after ${o.warmUpS} s the file-size limit drops to 0 (${how}) for ${o.faultS} s (${secs(d.faultMs)} measured) while the stream goes on, then ${o.tailS} s more. GW_COMMUNITY_QUEUE_MAX=${o.queueMax}, GW_COMMUNITY_CATCHUP_MAX_MESSAGES=${o.catchUpMax}, production store retry backoff (1 s doubling to 30 s). RSS is /proc VmRSS every ${o.sampleEveryMs} ms: baseline the last sample before the fault, peak from the fault on, "once all was stored" after every message was stored and health was ok. Lost and twice are judged on the state database against the posted Discord ids and texts. ${ci}`;
}
