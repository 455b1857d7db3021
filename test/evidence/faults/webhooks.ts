/**
 * Webhook targets that fail (spec "Webhook delivery", reliability.md F4/F5), against real `gw serve`
 * processes and a TCP-level receiver (test/fakes/fault-receiver.ts): one channel per fault, each
 * message stored through the real ingest before gw starts. 5xx, a 302 (never followed), a hang past
 * the timeout, a reset mid-body and a cut-off 503 must take exactly 5 attempts and end dead, every 4xx
 * exactly 1; a refused connection is counted from gw's own log lines; a schedule interrupted by a
 * SIGTERM restart resumes at its stored time. Gaps are measured from one attempt's end to the next
 * one's start and compared with GW_WEBHOOK_RETRY_DELAYS_MS ±20 %; every message stays unread.
 */
import type { NormalizedMessage } from "../../../src/ingest/ingest.ts";
import type { DeliveryRow } from "../../../src/store/deliveries.ts";
import { type FaultReply, faultReceiver } from "../../fakes/fault-receiver.ts";
import { inbound, seedStore } from "../../helpers/messages.ts";
import { freePort, isolatedEnv } from "../../helpers/process.ts";
import { entry, FRIEND, type Gw, startGw, unread, waitFor, workDir } from "./harness.ts";
import { type FaultRun, row } from "./types.ts";

/** Distinct waits, so a gap compared with the wrong one shows. */
export const DELAYS_MS = [200, 250, 300, 350] as const;
export const TIMEOUT_MS = 250;
const JITTER = 0.2;
/** Allowed beyond ±20 %: the receiver sees an abort a little after the sender; timers fire a little late. */
export const EARLY_SLACK_MS = 10;
export const LATE_SLACK_MS = 40;
const SECRET = "faults-webhook-secret-0123456789";

export interface KindResult {
  kind: string;
  attempts: number;
  status: string;
  lastCode: number | null;
  lastError: string | null;
  deliveryIds: number;
  gapRatios: number[];
  unread: boolean;
}

export interface WebhookDetails {
  kinds: KindResult[];
  redirectTargetHits: number;
  resetMidBody: boolean;
  restart: { attempts: number; status: string; beforeStop: number; gapRatios: number[]; restartMs: number };
}

const RETRIED: Record<string, FaultReply> = {
  "500": { status: 500 },
  "502": { status: 502 },
  "503": { status: 503 },
  "504": { status: 504 },
  "hang past the timeout": "hang",
  "reset mid-body": "reset",
  "503 cut off mid-body": "cut-503",
};
const DEAD_AT_ONCE = [400, 401, 403, 404, 408, 410, 429];

const channelOf = (kind: string) => `any;+;faults-${kind.replaceAll(" ", "-")}`;

/** Messages from the allowlisted friend, one per channel, stored (with their pending deliveries) before start. */
const seed = (env: Record<string, string>, messages: NormalizedMessage[]): string[] =>
  seedStore(env, messages, {
    webhooks: true,
    entries: [{ source: "device_messenger", id: FRIEND, person_id: "ann", display_name: null }],
  });

const message = (kind: string, text = `fault ${kind}`) =>
  inbound({
    channel: { id: channelOf(kind), type: "group", platformRef: channelOf(kind) },
    sender: { id: FRIEND, displayName: "Ann" },
    text,
    timestampMs: Date.now(),
  });

const deliveries = (gw: Gw): DeliveryRow[] =>
  gw.db((db) => db.query("SELECT * FROM webhook_deliveries ORDER BY created_at").all() as DeliveryRow[]);

const settled = (gw: Gw, n: number, timeoutMs = 15_000) =>
  waitFor(
    () => {
      const all = deliveries(gw);
      return all.length === n && all.every((d) => d.status !== "pending") ? all : undefined;
    },
    `${n} deliveries settled`,
    timeoutMs,
  );

/** Each gap (end of attempt i → start of attempt i+1) as a multiple of its scheduled wait. */
function ratios(ends: number[], starts: number[], delays: readonly number[]): number[] {
  return starts.slice(1).map((start, i) => (start - (ends[i] as number)) / (delays[i] as number));
}

function onSchedule(gapRatios: number[], delays: readonly number[]): boolean {
  return gapRatios.every((r, i) => {
    const d = delays[i] as number;
    return r * d >= d * (1 - JITTER) - EARLY_SLACK_MS && r * d <= d * (1 + JITTER) + LATE_SLACK_MS;
  });
}

/** The gaps as multiples of their waits, and how far any went outside ±20 % (the slack allowed). */
function gapText(gapRatios: number[], delays: readonly number[]): string {
  const outside = gapRatios.map((r, i) => {
    const d = delays[i] as number;
    return Math.max(0, r * d - d * (1 + JITTER), d * (1 - JITTER) - r * d);
  });
  const late = outside.filter((o) => o > 0);
  return `gaps ${span(gapRatios)} their waits (${late.length === 0 ? "all within ±20 %" : `${late.length} up to ${Math.round(Math.max(...late))} ms outside ±20 %`})`;
}

const span = (all: number[]) =>
  all.length === 0 ? "—" : `${Math.min(...all).toFixed(2)}–${Math.max(...all).toFixed(2)}×`;

const webhookEnv = (url: string, delays: readonly number[]) => ({
  GW_WEBHOOK_URL: url,
  GW_WEBHOOK_SECRET: SECRET,
  GW_WEBHOOK_RETRY_DELAYS_MS: delays.join(","),
  GW_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
});

/** One gw serve, one channel per fault: 5xx, hang, reset, cut body, 302, and every 4xx of the spec. */
async function perChannel(): Promise<{ kinds: KindResult[]; redirectHits: number; resetMidBody: boolean }> {
  const work = workDir("webhooks");
  const redirectTarget = faultReceiver(() => ({ status: 204 }));
  const planFor = new Map<string, FaultReply>();
  for (const [kind, reply] of Object.entries(RETRIED)) planFor.set(channelOf(kind), reply);
  planFor.set(channelOf("302"), { status: 302, location: redirectTarget.url });
  for (const s of DEAD_AT_ONCE) planFor.set(channelOf(String(s)), { status: s });
  const receiver = faultReceiver(({ channelId }) => planFor.get(channelId ?? "") ?? { status: 204 });
  let gw: Gw | null = null;
  try {
    const kinds = [...Object.keys(RETRIED), "302", ...DEAD_AT_ONCE.map(String)];
    const env = isolatedEnv(work.dir, webhookEnv(receiver.url, DELAYS_MS));
    // The reset channel's body is 256 KiB, so the reset lands while it is still coming.
    const ids = seed(
      env,
      kinds.map((k) => message(k, k === "reset mid-body" ? `big ${"x".repeat(256 * 1024)}` : undefined)),
    );
    gw = await startGw({ dir: work.dir, env, allowlist: entry("device_messenger", FRIEND, "ann") });
    const rows = await settled(gw, kinds.length);
    const listed = new Set((await unread(gw)).map((m) => m.id));
    const results = kinds.map((kind, i): KindResult => {
      const hits = receiver.hits.filter((h) => h.channelId === channelOf(kind));
      const d = rows.find((r) => r.message_id === ids[i]) as DeliveryRow;
      return {
        kind,
        attempts: hits.length,
        status: d.status,
        lastCode: d.last_code,
        lastError: d.last_error,
        deliveryIds: new Set(hits.map((h) => h.deliveryId)).size,
        gapRatios: ratios(
          hits.map((h) => h.end ?? Number.NaN),
          hits.map((h) => h.start),
          DELAYS_MS,
        ),
        unread: listed.has(ids[i] as string),
      };
    });
    const resets = receiver.hits.filter((h) => h.reply === "reset");
    return {
      kinds: results,
      redirectHits: redirectTarget.hits.length,
      resetMidBody: resets.length > 0 && resets.every((h) => (h.bodyMissing ?? 0) > 0),
    };
  } finally {
    await gw?.stop();
    receiver.stop();
    redirectTarget.stop();
    work.remove();
  }
}

/** Nothing listens at the URL: attempts and their times come from gw's own log lines. */
async function refused(): Promise<KindResult> {
  const work = workDir("webhooks-refused");
  let gw: Gw | null = null;
  try {
    const env = isolatedEnv(work.dir, webhookEnv(`http://127.0.0.1:${freePort()}/webhook`, DELAYS_MS));
    const [id] = seed(env, [message("refused")]);
    gw = await startGw({ dir: work.dir, env, allowlist: entry("device_messenger", FRIEND, "ann") });
    const [d] = (await settled(gw, 1)) as [DeliveryRow];
    const attempts = gw
      .logs()
      .filter((l) => l.delivery_id === d.id && typeof l.attempt === "number")
      .sort((a, b) => Number(a.attempt) - Number(b.attempt));
    const times = attempts.map((l) => l.at);
    const listed = new Set((await unread(gw)).map((m) => m.id));
    return {
      kind: "refused connection",
      attempts: attempts.length,
      status: d.status,
      lastCode: d.last_code,
      lastError: d.last_error,
      deliveryIds: new Set(attempts.map((l) => l.delivery_id)).size,
      // A refused attempt takes about a millisecond: log time to log time is the wait.
      gapRatios: ratios(times, times, DELAYS_MS),
      unread: listed.has(id as string),
    };
  } finally {
    await gw?.stop();
    work.remove();
  }
}

/** Two attempts, SIGTERM, a new gw serve on the same files: the schedule goes on at its stored time. */
export const RESTART_DELAYS_MS = [200, 1500, 250, 300] as const;
async function restart(): Promise<WebhookDetails["restart"] & { unread: boolean; deliveryIds: number }> {
  const work = workDir("webhooks-restart");
  const receiver = faultReceiver(() => ({ status: 503 }));
  let gw: Gw | null = null;
  try {
    const env = isolatedEnv(work.dir, webhookEnv(receiver.url, RESTART_DELAYS_MS));
    const [id] = seed(env, [message("restart")]);
    const allowlist = entry("device_messenger", FRIEND, "ann");
    gw = await startGw({ dir: work.dir, env, allowlist });
    const first = gw;
    await waitFor(
      () => (receiver.hits.length >= 2 && receiver.hits[1]?.end ? true : undefined),
      "2 attempts",
    );
    const t0 = performance.now();
    const code = await first.stop();
    if (code !== 0) throw new Error(`gw serve exited ${code} on SIGTERM`);
    const beforeStop = receiver.hits.length;
    gw = await startGw({ dir: work.dir, env, port: first.port });
    const restartMs = performance.now() - t0;
    const [d] = (await settled(gw, 1)) as [DeliveryRow];
    const hits = receiver.hits;
    const listed = new Set((await unread(gw)).map((m) => m.id));
    return {
      attempts: hits.length,
      status: d.status,
      beforeStop,
      restartMs,
      gapRatios: ratios(
        hits.map((h) => h.end ?? Number.NaN),
        hits.map((h) => h.start),
        RESTART_DELAYS_MS,
      ),
      unread: listed.has(id as string),
      deliveryIds: new Set(hits.map((h) => h.deliveryId)).size,
    };
  } finally {
    await gw?.stop();
    receiver.stop();
    work.remove();
  }
}

export async function webhookFaults(): Promise<FaultRun<WebhookDetails>> {
  const a = await perChannel();
  const r = await refused();
  const b = await restart();
  const kinds = [...a.kinds, r];
  const rows = kinds.map((k) => {
    const once = DEAD_AT_ONCE.includes(Number(k.kind));
    const checks: Record<string, boolean> = {
      [`${once ? 1 : 5} attempt(s)`]: k.attempts === (once ? 1 : 5),
      dead: k.status === "dead",
      "one delivery id": k.deliveryIds === 1,
      "still unread": k.unread,
    };
    if (!once) checks["gaps ±20 %"] = onSchedule(k.gapRatios, DELAYS_MS);
    if (k.kind === "302") checks["redirect not followed"] = a.redirectHits === 0 && k.lastCode === 302;
    if (k.kind === "reset mid-body") checks["reset before the body ended"] = a.resetMidBody;
    if (k.kind === "refused connection") checks["no status recorded"] = k.lastCode === null;
    const held = once
      ? `dead after exactly 1 attempt (last_code ${k.lastCode}); still in /messages/unread`
      : `${k.attempts} attempts, then dead; ${gapText(k.gapRatios, DELAYS_MS)}; one delivery id; still in /messages/unread${k.kind === "302" ? "; the Location was never fetched" : ""}`;
    return row(`webhook target: ${k.kind}${once ? "" : " every time"}`, k.attempts, held, checks);
  });
  const acrossRestart = b.gapRatios[1] ?? Number.NaN;
  rows.push(
    row(
      "webhook schedule interrupted by a gw serve restart (SIGTERM after 2 attempts of 503)",
      b.attempts,
      `${b.beforeStop} attempts before the stop, ${b.attempts - b.beforeStop} after; dead after 5 in all; the attempt due during the restart came at ${acrossRestart.toFixed(2)}× its wait (restart took ${Math.round(b.restartMs)} ms); all ${gapText(b.gapRatios, RESTART_DELAYS_MS)}; one delivery id; still unread`,
      {
        "5 attempts in all": b.attempts === 5,
        dead: b.status === "dead",
        "schedule kept across the restart": onSchedule(b.gapRatios, RESTART_DELAYS_MS),
        "one delivery id": b.deliveryIds === 1,
        "still unread": b.unread,
      },
    ),
  );
  return {
    rows,
    notes: [
      `Webhooks: GW_WEBHOOK_RETRY_DELAYS_MS=${DELAYS_MS.join(",")} (restart run ${RESTART_DELAYS_MS.join(",")}), GW_WEBHOOK_TIMEOUT_MS=${TIMEOUT_MS}. A gap is measured at the receiver from the end of one attempt (reply written, reset, or the sender's abort) to the first byte of the next; it holds when within ±20 % of its wait, give or take ${EARLY_SLACK_MS} ms early / ${LATE_SLACK_MS} ms late for timers and the loopback. Refused connections are timed from gw's own log lines.`,
    ],
    details: {
      kinds,
      redirectTargetHits: a.redirectHits,
      resetMidBody: a.resetMidBody,
      restart: b,
    },
  };
}
