/**
 * What bench/soak/soak.ts reports: the verdict rows (the RSS target, the series, the rates, whether gw kept
 * up, the exactly-once audit) and the human lines before them. Pure.
 */
import { commas, plainRow, type SummaryRow } from "../lib/report.ts";
import { type Dist, r1, r2 } from "../lib/stats.ts";
import type { SoakAudit } from "./audit.ts";

export const TARGET_RATIO = 1.2;

/** gw at one checkpoint (every 5 % of the messages), right after catch-up. */
export interface Checkpoint {
  stored: number;
  tS: number;
  /** Median of three readings 250 ms apart. */
  rssMiB: number;
  /** Lowest and highest of the 1 s samples since the previous checkpoint. */
  windowMinMiB: number;
  windowMaxMiB: number;
  hwmMiB: number;
  gwCpuS: number;
  dbMiB: number;
  walMiB: number;
  attachments: number;
  fakeRssMiB: number;
  /** BENCH_SOAK_PROBE=1 only: gw.ts's `heap` before and after a full collection. */
  probe?: { before: ProbeHeap; after: ProbeHeap };
}

export interface ProbeHeap {
  gcMs: number | null;
  rssMiB: number;
  mimallocCommitMiB: number;
  heapSizeMiB: number;
  heapCapacityMiB: number;
  extraMiB: number;
  objects: number;
  types: Record<string, number>;
  discord: Record<string, number> | null;
  sqliteCacheSize: number;
}

export interface SoakRun {
  scale: number;
  /** Least-squares slope of the 1 s RSS samples after the first checkpoint, MiB per 100,000 messages. */
  trendPer100k: number;
  perSource: number;
  perChunk: number;
  chunks: number;
  rps: number;
  probe: boolean;
  soakS: number;
  allowed: number;
  files: number;
  checkpoints: Checkpoint[];
  storeLag: Dist;
  sourceLag: { discord: Dist; imessage: Dist };
  lag: Dist;
  postMs: Dist;
  busyPct: number | null;
  audit: SoakAudit;
  sink: { ids: number; dupes: number; bad: number };
  stop: { exitCode: number; ms: number };
  health: { status: string; webhooks: { queue_depth: number; dead: number } };
  warnings: Map<string, number>;
}

export function soakSummary(r: SoakRun): { summary: SummaryRow[]; lines: string[]; ratio: number } {
  const first = r.checkpoints[0] as Checkpoint;
  const end = r.checkpoints[r.checkpoints.length - 1] as Checkpoint;
  const ratio = r2(end.rssMiB / first.rssMiB);
  const total = 2 * r.perSource;
  const { audit, sink } = r;
  const row = plainRow;
  const gw = r.probe ? "gw (bench/soak/gw.ts, BENCH_SOAK_PROBE=1)" : "gw serve";
  const summary: SummaryRow[] = [
    {
      figure: `${gw} RSS after all ${commas(total)} messages vs after the first ${commas(first.stored)} (median of 3 readings right after catch-up)`,
      value: `${end.rssMiB} MiB (peak ${end.hwmMiB} MiB)`,
      baseline: `after ${commas(first.stored)}: ${first.rssMiB} MiB`,
      ratio,
      target: `≤ ${TARGET_RATIO}×`,
      pass: ratio <= TARGET_RATIO,
    },
    row(
      "RSS every 5 % of the messages (thousands stored: MiB)",
      r.checkpoints.map((c) => `${commas(Math.round(c.stored / 1000))}k: ${c.rssMiB}`).join(", "),
    ),
    row(
      "RSS sampled every second, lowest / highest in the first and in the last 5 % of the messages",
      `${first.windowMinMiB} / ${first.windowMaxMiB} MiB → ${end.windowMinMiB} / ${end.windowMaxMiB} MiB`,
    ),
    row(
      "RSS trend after the first 5 %: least-squares slope of the 1 s samples",
      `${r.trendPer100k >= 0 ? "+" : ""}${r.trendPer100k} MiB per 100,000 messages`,
    ),
    row(
      `messages stored per second over the soak (paced at ${commas(r.rps)}/s while posting, catch-up waits included)`,
      `${commas(Math.round(total / r.soakS))} msg/s (${commas(total)} in ${r1(r.soakS)} s)`,
    ),
    row(
      "webhooks delivered per second over the soak",
      `${commas(Math.round(r.allowed / r.soakS))}/s (${commas(r.allowed)})`,
    ),
    row(
      `kept up: a chunk's last message → all stored; → caught up, webhooks too (${r.chunks} chunks, polled every 50 ms)`,
      `p50 ${r.storeLag.p50} / p99 ${r.storeLag.p99} / max ${r.storeLag.max} ms; p50 ${r.lag.p50} / p99 ${r.lag.p99} / max ${r.lag.max} ms`,
    ),
    row(
      `stored exactly once with the right allowlist status (${commas(r.perSource)} MESSAGE_CREATEs + ${commas(r.perSource)} chat.db rows)`,
      `${commas(audit.stored.once)}/${commas(total)} (${audit.stored.missing} missing, ${audit.stored.duplicated} duplicated, ${audit.stored.wrongStatus} wrong status)`,
      "all, once",
      audit.stored.once === total && audit.stored.wrongStatus === 0 && audit.stored.unexpected === 0,
    ),
    row(
      "allowlisted messages' webhooks delivered exactly once (signature valid, received once)",
      `${commas(audit.webhooks.deliveredOnce)}/${commas(r.allowed)} (sink ${commas(sink.ids)} ids, ${sink.dupes} repeated, ${sink.bad} bad; ${audit.webhooks.forUnknown} for unknown senders; ${audit.webhooks.attemptsOverOne} needed a retry)`,
      "all, once",
      audit.webhooks.deliveredOnce === r.allowed &&
        audit.webhooks.allowed === r.allowed &&
        audit.webhooks.forUnknown === 0 &&
        audit.webhooks.sinkOnly === 0 &&
        sink.dupes === 0 &&
        sink.bad === 0,
    ),
    row(
      "Discord files stored (1 % of messages, 0.2–4 KiB each)",
      `${commas(audit.attachments.stored)}/${commas(r.files)}`,
      "all",
      audit.attachments.stored === r.files && audit.attachments.rows === r.files,
    ),
  ];

  const col = (xs: (string | number)[], widths: number[]) =>
    `  ${xs.map((x, i) => String(x).padStart(widths[i] ?? 8)).join(" ")}`;
  const w = [9, 7, 8, 8, 15, 7, 9, 10, 6, 6, 9];
  const lines = [
    `soak: scale ${r.scale} (${commas(r.perSource)} Discord + ${commas(r.perSource)} chat.db), ${r.chunks} chunks of ${commas(r.perChunk)} + ${commas(r.perChunk)} at ${commas(r.rps)} msg/s, ${r1(r.soakS)} s; ${gw} exited ${r.stop.exitCode} ${r.stop.ms} ms after its stop`,
    col(
      [
        "stored",
        "t s",
        "RSS MiB",
        "× first",
        "1 s min/max",
        "peak",
        "gw CPU s",
        "gw.db MiB",
        "WAL",
        "files",
        "fake MiB",
      ],
      w,
    ),
    ...r.checkpoints.map((c) =>
      col(
        [
          commas(c.stored),
          c.tS,
          c.rssMiB,
          r2(c.rssMiB / first.rssMiB),
          `${c.windowMinMiB}/${c.windowMaxMiB}`,
          c.hwmMiB,
          c.gwCpuS,
          c.dbMiB,
          c.walMiB,
          c.attachments,
          c.fakeRssMiB,
        ],
        w,
      ),
    ),
  ];
  if (r.probe) {
    lines.push(
      "inside gw (gw.ts), before → after Bun.gc(true): RSS, mimalloc committed, JS heap live / capacity / outside, cells; discord.js caches",
      ...r.checkpoints.map((c) => {
        const b = c.probe?.before;
        const a = c.probe?.after;
        if (!a || !b) return "";
        return `  ${commas(c.stored).padStart(9)}: RSS ${b.rssMiB} → ${a.rssMiB}, mimalloc ${b.mimallocCommitMiB} → ${a.mimallocCommitMiB}, heap ${b.heapSizeMiB}/${b.heapCapacityMiB}/${b.extraMiB} → ${a.heapSizeMiB}/${a.heapCapacityMiB}/${a.extraMiB} MiB, ${commas(b.objects)} → ${commas(a.objects)} cells (gc ${a.gcMs} ms); ${JSON.stringify(a.discord)}`;
      }),
    );
  }
  const d = r.sourceLag.discord;
  const i = r.sourceLag.imessage;
  lines.push(
    `a chunk's last message → all its Discord messages stored p50 ${d.p50} / p90 ${d.p90} / max ${d.max} ms; all its chat.db rows p50 ${i.p50} / p90 ${i.p90} / max ${i.max} ms`,
    `posting a chunk: p50 ${r.postMs.p50} / max ${r.postMs.max} ms; machine ${r.busyPct}% busy over the soak (this benchmark's processes included)`,
    `gw at the end: /healthz ${r.health.status}, queue ${r.health.webhooks.queue_depth}, dead ${r.health.webhooks.dead}; its warnings and errors: ${r.warnings.size === 0 ? "none" : ""}`,
    ...[...r.warnings].map(([msg, n]) => `  ${n} × ${msg}`),
  );
  return { summary, lines, ratio };
}
