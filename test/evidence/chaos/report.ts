/**
 * What a chaos run reports (pure): the totals counted on the final snapshot, one evidence row per thing
 * tried (bench/lib/evidence.ts's shape: what, how many times, what held, whether it all did) and the
 * summary line in reliability.md 8.4's style.
 */
import type { EvidenceRow } from "../../../bench/lib/evidence.ts";
import { GRACE_MS, identityOf } from "./changes.ts";
import { eventIdentity, platformSends, purged, type Verdict } from "./checks.ts";
import { type CycleResult, PHASES, type Phase } from "./kill-loop.ts";
import type { ReceiverKillResult } from "./receiver-kill.ts";
import type { SigtermResult } from "./sigterm-load.ts";
import type { Snapshot } from "./snapshot.ts";

export interface ChaosTotals {
  in: number;
  stored: number;
  allowed: number;
  delivered: number;
  dead: number;
  lost: number;
  duplicateRows: number;
  duplicateSends: number;
  keys: number;
  platformSends: number;
  redelivered: number;
  /** Keys whose retry was answered 502 outcome_unknown (a kill caught their send in flight). */
  outcomeUnknown: number;
  /** Files in the attachment directory that no record names (left by a kill between download and commit). */
  orphanFiles: number;
  files: number;
  /** Files carried by source messages. */
  filesPosted: number;
  /** Platform changes made (edits, unsends/deletes, reactions), per platform. */
  changesIMessage: number;
  changesDiscord: number;
  /** Changes to allowlisted messages owed an event (every iMessage one; Discord dispatched while connected). */
  changesOwed: number;
  changesOwedDiscord: number;
  /** Discord changes a kill caught within GRACE_MS of their dispatch, and how many of them were stored. */
  discordCaught: number;
  discordCaughtStored: number;
  /** Events in gw.db; changes stored as more than one event. */
  events: number;
  duplicateEvents: number;
}

export interface ChaosReport {
  seed: number;
  cycles: CycleResult[];
  binaryCycle: boolean;
  finalVerdicts: Verdict[];
  settle: { exitCode: number; retried: number } | null;
  sigterm: SigtermResult[];
  receiver: ReceiverKillResult | null;
  totals: ChaosTotals;
  rows: EvidenceRow[];
  summary: string;
  ok: boolean;
  errors: string[];
}

export function emptyTotals(): ChaosTotals {
  return {
    in: 0,
    stored: 0,
    allowed: 0,
    delivered: 0,
    dead: 0,
    lost: 0,
    duplicateRows: 0,
    duplicateSends: 0,
    keys: 0,
    platformSends: 0,
    redelivered: 0,
    outcomeUnknown: 0,
    orphanFiles: 0,
    files: 0,
    filesPosted: 0,
    changesIMessage: 0,
    changesDiscord: 0,
    changesOwed: 0,
    changesOwedDiscord: 0,
    discordCaught: 0,
    discordCaughtStored: 0,
    events: 0,
    duplicateEvents: 0,
  };
}

export function totalsOf(s: Snapshot): ChaosTotals {
  const stored = new Map<string, number>();
  for (const m of s.messages)
    if (m.platform_id !== null)
      stored.set(`${m.source} ${m.platform_id}`, (stored.get(`${m.source} ${m.platform_id}`) ?? 0) + 1);
  const times = s.sources.map((i) => stored.get(`${i.source} ${i.platformId}`) ?? 0);
  const sent = [...platformSends(s).values()];
  const named = new Set(s.attachments.map((a) => a.file_name));
  const events = new Map<string, number>();
  // A deleted message's edit events keep no text; eventsOnce counts them per message (checks.ts).
  for (const e of s.events.filter((x) => !purged(x)))
    events.set(eventIdentity(e), (events.get(eventIdentity(e)) ?? 0) + 1);
  // Deliveries of messages deleted since are counted with neither (the pending ones were dropped).
  const tombstones = new Set(s.messages.filter((m) => m.allowlist_status === "deleted").map((m) => m.id));
  const live = s.deliveries.filter((d) => !tombstones.has(d.message_id));
  const caught = s.changes.filter((c) => c.source === "community_chat" && c.promised === false);
  return {
    in: s.sources.length,
    stored: times.filter((n) => n === 1).length,
    allowed: s.messages.filter((m) => m.direction === "inbound" && m.allowlist_status === "allowed").length,
    delivered: live.filter((d) => d.status === "delivered").length,
    dead: live.filter((d) => d.status === "dead").length,
    lost: times.filter((n) => n === 0).length,
    duplicateRows: [...stored.values()].filter((n) => n > 1).length,
    duplicateSends: sent.filter((n) => n > 1).length,
    keys: s.sends.length,
    platformSends: sent.reduce((a, b) => a + b, 0),
    redelivered: s.sink.filter((d) => d.accepted > 1).length,
    files: s.attachments.filter((a) => a.file_name !== null).length,
    filesPosted: s.sources.reduce((a, i) => a + i.files, 0),
    orphanFiles: s.attachmentFiles.filter((f) => !named.has(f)).length,
    outcomeUnknown: s.sends.filter((r) =>
      r.answers.some((a) => JSON.stringify(a.body).includes('"outcome_unknown"')),
    ).length,
    changesIMessage: s.changes.filter((c) => c.source === "device_messenger").length,
    changesDiscord: s.changes.filter((c) => c.source === "community_chat").length,
    changesOwed: s.changes.filter((c) => c.promised !== false && c.targetAllowed).length,
    changesOwedDiscord: s.changes.filter(
      (c) => c.source === "community_chat" && c.promised !== false && c.targetAllowed,
    ).length,
    discordCaught: caught.length,
    discordCaughtStored: caught.filter((c) => events.has(identityOf(c))).length,
    events: s.events.length,
    duplicateEvents: [...events.values()].filter((n) => n > 1).length,
  };
}

type ReportCore = Omit<ChaosReport, "rows" | "ok" | "summary">;

const PHASE_TEXT: Record<Phase, string> = {
  "start-up": "kill -9 of gw serve during start-up (a backlog waiting in chat.db and on Discord)",
  ingest:
    "kill -9 of gw serve during an ingest burst (chat.db rows and Discord posts at once, with edits, unsends and reactions)",
  delivery: "kill -9 of gw serve during webhook delivery (the receiver answering 500 to some)",
  send: "kill -9 of gw serve with sends in flight (Idempotency-Keys; unanswered keys retried later)",
};

export function evidenceRows(r: ReportCore): EvidenceRow[] {
  const rows: EvidenceRow[] = [];
  for (const phase of PHASES) {
    const cs = r.cycles.filter((c) => c.phase === phase);
    if (cs.length === 0) continue;
    const bad = cs.filter((c) => c.error !== null || c.failures.length > 0);
    const extra =
      phase === "send"
        ? `; ${cs.filter((c) => c.caughtPost).length} kill(s) between Discord's post and gw's record`
        : phase === "ingest" && r.binaryCycle
          ? "; one cycle with the compiled dist/gw"
          : "";
    rows.push({
      tried: PHASE_TEXT[phase],
      times: cs.length,
      held: `after every kill: integrity ok, no duplicate rows, nothing lost at or below the cursors, one delivery row per allowlisted message, no key sent twice, no event twice or without its change, changed messages as their events say${extra}${bad.length ? `; ${bad.length} cycle(s) failed` : ""}`,
      ok: bad.length === 0,
    });
  }
  const v = (name: string) => r.finalVerdicts.find((x) => x.name === name);
  const t = r.totals;
  const held = (name: string) => v(name)?.held ?? false;
  const detail = (name: string) => (held(name) ? "" : ` — ${v(name)?.detail ?? "not checked"}`);
  if (r.settle) {
    rows.push({
      tried:
        "final clean run: every source message (chat.db rows incl. the stand-in's sends, Discord posts) stored",
      times: t.in,
      held: `${t.in} in, ${t.stored} stored exactly once, ${t.lost} lost, ${t.duplicateRows} duplicate rows${detail("every source message stored exactly once")}`,
      ok:
        held("every source message stored exactly once") &&
        held("stored as the sender is classified") &&
        r.settle.exitCode === 0,
    });
    rows.push({
      tried: "files carried by messages (Discord attachments; chat.db files, half landing after their row)",
      times: t.filesPosted,
      held: `each re-hosted once with its message (${t.files} stored), every record's bytes on disk; ${t.orphanFiles} file(s) without a record after the settle run (a kill between re-hosting and storing leaves one; start-up deletes them)${detail("every posted file re-hosted once with its message")}${detail("every stored attachment has its bytes")}`,
      ok:
        held("every posted file re-hosted once with its message") &&
        held("every stored attachment has its bytes") &&
        t.orphanFiles === 0,
    });
    rows.push({
      tried:
        "kill -9 during a burst of edits, unsends and reactions on messages already stored (iMessage: chat.db rows edited and unsent in place, tapback rows 2000–2007/3000–3007, also while gw is down; Discord: MESSAGE_UPDATE, MESSAGE_DELETE, reactions while gw is connected)",
      times: t.changesIMessage + t.changesDiscord,
      held: `${t.changesIMessage} iMessage and ${t.changesDiscord} Discord changes; ${t.changesOwed} to allowlisted messages owed an event (${t.changesOwed - t.changesOwedDiscord} iMessage: all of them; ${t.changesOwedDiscord} Discord: dispatched while gw was connected and caught up, ≥ ${GRACE_MS} ms before a kill), each stored as exactly one event; ${t.discordCaught} Discord change(s) a kill caught within ${GRACE_MS} ms (not recovered, as documented: ${t.discordCaughtStored} stored anyway); ${t.events} events, ${t.duplicateEvents} changes stored twice, none without its change; edited messages carry their latest text, deleted ones are tombstones (after every kill and at the end)${detail("every change to an allowlisted message stored as exactly one event")}${detail("no change stored as two events, no event without its change")}${detail("edited messages carry their latest text, deleted ones are tombstones")}`,
      ok:
        held("every change to an allowlisted message stored as exactly one event") &&
        held("no change stored as two events, no event without its change") &&
        held("edited messages carry their latest text, deleted ones are tombstones"),
    });
    rows.push({
      tried: "every allowlisted message delivered to the webhook receiver (deduped by delivery id)",
      times: t.allowed,
      held: `${t.delivered} delivered (${t.redelivered} redelivered after a kill), ${t.dead} dead (refused every time), 0 pending; one delivery row each${detail("every allowlisted message delivered at least once (dead only when always refused)")}`,
      ok:
        held("every allowlisted message delivered at least once (dead only when always refused)") &&
        held("exactly one delivery row per allowlisted message"),
    });
    rows.push({
      tried:
        "sends with Idempotency-Keys across the kills (Messages stand-in rows and fake Discord posts counted per key)",
      times: t.keys,
      held: `${t.platformSends} platform sends, ${t.duplicateSends} keys sent twice; every 200 sent once and recorded once; ${t.outcomeUnknown} retries answered 502 outcome_unknown (never sent again); ${r.settle.retried} unanswered key(s) retried at the end${detail("every send answered 200 was sent once and recorded once")}`,
      ok:
        held("no platform send twice for one Idempotency-Key") &&
        held("every send answered 200 was sent once and recorded once"),
    });
    rows.push({
      tried:
        "PRAGMA integrity_check and foreign_key_check (after every kill and at the end); file modes; canary secrets",
      times: r.cycles.length + 1,
      held: `ok and empty every time; database, WAL, SHM, logs 0600, directories 0700; no canary in logs or output${detail("integrity_check ok, foreign_key_check empty")}${detail("database, WAL, SHM, logs 0600; their directories 0700")}${detail("no canary secret in any log or output")}`,
      ok:
        held("integrity_check ok, foreign_key_check empty") &&
        held("database, WAL, SHM, logs 0600; their directories 0700") &&
        held("no canary secret in any log or output"),
    });
  }
  if (r.sigterm.length > 0) {
    const ss = r.sigterm;
    const sum = (f: (x: SigtermResult) => number) => ss.reduce((a, x) => a + f(x), 0);
    const problems = ss.flatMap((x) => x.problems);
    rows.push({
      tried: "SIGTERM of gw serve under load (ingest, unread + mark_read + sends in flight)",
      times: ss.length,
      held: `exit ${[...new Set(ss.map((x) => x.exitCode))].join("/")} within ${Math.max(...ss.map((x) => x.stopMs))} ms; ${sum((x) => x.acknowledged.sends)} sends, ${sum((x) => x.acknowledged.marks)} marks, ${sum((x) => x.acknowledged.listed)} listed messages acknowledged: all there before and after the restart; chat.db rows committed before the signal and read by gw (at each signal: ${ss.map((x) => x.readByGw).join(", ")}), all stored, the rest stored after the restart${problems.length ? ` — ${problems.slice(0, 3).join("; ")}` : ""}`,
      ok: ss.every((x) => x.exitCode === 0) && problems.length === 0,
    });
  }
  if (r.receiver) {
    const k = r.receiver;
    rows.push({
      tried:
        "kill -9 of gw receiver after its 204s: a run going in each of two chats (the agent started a grandchild that ignores SIGTERM), 0–2 accepted messages queued behind each",
      times: k.rounds,
      held: `${k.orphans} agent processes alive 2 s later; ${k.accepted} accepted messages, ${k.ended} run to their end, ${k.rerun} runs by the receiver after a kill (each marked interrupted, in channel order); none run twice within one receiver lifetime, none again after its run ended${k.problems.length ? ` — ${k.problems.slice(0, 3).join("; ")}` : ""}`,
      ok: k.rounds > 0 && k.orphans === 0 && k.problems.length === 0 && k.ended === k.accepted,
    });
  }
  for (const e of r.errors)
    rows.push({ tried: "the run itself", times: 1, held: e.slice(0, 300), ok: false });
  return rows;
}

export function summaryLine(r: ReportCore): string {
  const t = r.totals;
  return [
    `${t.in} in, ${t.stored} stored, ${t.delivered} delivered, ${t.dead} dead, ${t.lost} lost, ${t.duplicateRows} duplicate rows, ${t.duplicateSends} duplicate sends`,
    `${t.changesIMessage + t.changesDiscord} edits/unsends/reactions (${t.changesOwed} owed an event, ${t.events} events, ${t.duplicateEvents} stored twice)`,
    `${r.cycles.length} kill cycles`,
    `${r.receiver?.rounds ?? 0} receiver kills (${r.receiver?.orphans ?? 0} orphans, ${r.receiver?.accepted ?? 0} accepted, ${r.receiver?.ended ?? 0} run to their end)`,
    `${r.sigterm.length} SIGTERM${r.sigterm.length === 1 ? "" : "s"} under load (exit ${[...new Set(r.sigterm.map((x) => x.exitCode))].join("/") || "—"})`,
    `seed ${r.seed}`,
  ].join(", ");
}
