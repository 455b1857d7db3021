/**
 * bench/load/load.ts's exactly-once audit, once the load has drained, from gw's own connection (gw.ts
 * `audit`), the sink's records, the fake's posts, chat.db's own rows and the stand-in's call log: every
 * inbound message stored exactly once with the right allowlist status; one delivery per allowed
 * message, received once, signature valid; every accepted send stored once and posted exactly once on
 * its platform. Also where an iMessage send's time goes (request → stand-in running → answer).
 */
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { decodeAttributedBody } from "../../src/connectors/device-messenger/typedstream.ts";
import { dist } from "../lib/stats.ts";
import type { LoadResult } from "./agents.ts";
import type { Attempt } from "./run.ts";
import { IN_PREFIX, OUT_PREFIX } from "./settings.ts";
import type { Inbound } from "./world.ts";

/** What gw.ts's `audit` answers: rows of gw.db, read on gw's own connection. */
export interface GwAudit {
  inbound: [text: string, status: string, n: number][];
  deliveries: [id: string, text: string, status: string, attempts: number][];
  outbound: [id: string, text: string, channel: string, platformId: string | null][];
  counts: Record<string, number>;
}

type Arrivals = Awaited<ReturnType<Attempt["sink"]["arrivals"]>>;

/** Every inbound message stored once, with the status its sender calls for; nothing else stored. */
export function auditInbound(audit: GwAudit, inbound: readonly Inbound[]) {
  const storedByText = new Map<string, { n: number; statuses: Set<string> }>();
  for (const [text, status, n] of audit.inbound) {
    const e = storedByText.get(text) ?? { n: 0, statuses: new Set<string>() };
    e.n += n;
    e.statuses.add(status);
    storedByText.set(text, e);
  }
  const expectedTexts = new Set(inbound.map((m) => m.text));
  const inboundAudit = {
    expected: inbound.length,
    storedOnce: 0,
    missing: 0,
    duplicated: 0,
    wrongStatus: 0,
    unexpected: [...storedByText.keys()].filter((t) => !expectedTexts.has(t)).length,
  };
  for (const m of inbound) {
    const e = storedByText.get(m.text);
    if (!e) inboundAudit.missing++;
    else if (e.n > 1) inboundAudit.duplicated++;
    else inboundAudit.storedOnce++;
    if (e && (e.statuses.size !== 1 || !e.statuses.has(m.from.allowed ? "allowed" : "unknown")))
      inboundAudit.wrongStatus++;
  }
  return inboundAudit;
}

/** One delivery row per allowed inbound message, delivered, received by the sink; none for strangers. */
export function auditWebhooks(audit: GwAudit, arrivals: Arrivals, allowedInbound: readonly Inbound[]) {
  const deliveriesByText = new Map<string, GwAudit["deliveries"]>();
  for (const d of audit.deliveries) {
    if (!d[1].startsWith(IN_PREFIX)) continue;
    deliveriesByText.set(d[1], [...(deliveriesByText.get(d[1]) ?? []), d]);
  }
  const webhookAudit = {
    allowedInbound: allowedInbound.length,
    deliveryRows: [...deliveriesByText.values()].reduce((a, l) => a + l.length, 0),
    deliveredOnce: 0,
    notDelivered: 0,
    receivedBySink: 0,
    sinkRecords: arrivals.byId.size,
    sinkDupes: arrivals.dupes,
    sinkBadSignatures: arrivals.bad,
    forUnknownSenders: [...deliveriesByText.keys()].filter((t) => !allowedInbound.some((m) => m.text === t))
      .length,
    attemptsOverOne: audit.deliveries.filter((d) => d[3] > 1).length,
  };
  for (const m of allowedInbound) {
    const rows = deliveriesByText.get(m.text) ?? [];
    if (rows.length === 1 && rows[0]?.[2] === "delivered") webhookAudit.deliveredOnce++;
    else webhookAudit.notDelivered++;
    if (rows.some((r) => arrivals.byId.has(r[0]))) webhookAudit.receivedBySink++;
  }
  return webhookAudit;
}

/** Sent text → times posted: the fake's posts and chat.db's own outgoing rows. */
function postedTexts(a: Attempt): Map<string, number> {
  const posted = new Map<string, number>();
  for (const p of a.fake.posted) {
    const text = String(p.body.content ?? "");
    if (text.startsWith(OUT_PREFIX)) posted.set(text, (posted.get(text) ?? 0) + 1);
  }
  const chatDb = new Database(a.chatDbPath, { readonly: true });
  for (const row of chatDb
    .query<{ text: string | null; body: Uint8Array | null }, []>(
      "SELECT text, attributedBody AS body FROM message WHERE is_from_me = 1",
    )
    .all()) {
    const text = decodeAttributedBody(row.body) ?? row.text ?? "";
    if (text.startsWith(OUT_PREFIX)) posted.set(text, (posted.get(text) ?? 0) + 1);
  }
  chatDb.close();
  return posted;
}

/** The stand-in's calls by text, and when each began (after its process started and loaded), epoch ms. */
function standinCalls(standinLog: string) {
  const calls = new Map<string, number>();
  const at = new Map<string, number>();
  try {
    for (const line of readFileSync(standinLog, "utf8").split("\n")) {
      if (!line.trim()) continue;
      const call = JSON.parse(line) as { argv?: string[]; at?: string };
      const text = call.argv?.[1] ?? "";
      calls.set(text, (calls.get(text) ?? 0) + 1);
      if (call.at && !at.has(text)) at.set(text, Date.parse(call.at));
    }
  } catch {}
  return { calls, at };
}

/**
 * Where an iMessage send's time goes: request → stand-in running (gw's checks, the spawn, Bun's
 * start-up and imports) and stand-in running → answer (the row written, exit, gw's chat.db check).
 */
function imessageSplit(a: Attempt, load: LoadResult, standinAt: ReadonlyMap<string, number>) {
  const toStandin: number[] = [];
  const fromStandin: number[] = [];
  for (const [, channel, text, status, ms, , startAt] of load.sends) {
    const at = standinAt.get(text);
    if (status !== 200 || channel.startsWith("community_chat:") || at === undefined) continue;
    const start = startAt - a.agents.offsetMs;
    toStandin.push(at - start);
    fromStandin.push(start + ms - at);
  }
  return { toStandinMs: dist(toStandin), standinToAnswerMs: dist(fromStandin) };
}

/** Every accepted send posted once on its platform and stored once; nothing posted for a refused one. */
export function auditSends(a: Attempt, audit: GwAudit, load: LoadResult) {
  const outboundById = new Map(audit.outbound.map((o) => [o[0], o]));
  const outboundTexts = new Map<string, number>();
  for (const o of audit.outbound) outboundTexts.set(o[1], (outboundTexts.get(o[1]) ?? 0) + 1);
  const posted = postedTexts(a);
  const standin = standinCalls(a.standinLog);
  const split = imessageSplit(a, load, standin.at);
  const sendAudit = {
    attempted: load.sends.length,
    accepted: 0,
    refused: 0,
    postedOnce: 0,
    notPosted: 0,
    postedTwice: 0,
    storedOnce: 0,
    storedWrong: 0,
    unconfirmedImessage: 0,
    postedThoughRefused: 0,
    outboundRows: audit.outbound.length,
    standinCalls: [...standin.calls.values()].reduce((x, y) => x + y, 0),
    statuses: {} as Record<string, number>,
  };
  for (const [, channel, text, status, , result] of load.sends) {
    sendAudit.statuses[status] = (sendAudit.statuses[status] ?? 0) + 1;
    const n = posted.get(text) ?? 0;
    if (status !== 200) {
      sendAudit.refused++;
      if (n > 0) sendAudit.postedThoughRefused++;
      continue;
    }
    sendAudit.accepted++;
    if (n === 1) sendAudit.postedOnce++;
    else if (n === 0) sendAudit.notPosted++;
    else sendAudit.postedTwice++;
    const row = outboundById.get(result);
    if (row && row[1] === text && row[2] === channel && outboundTexts.get(text) === 1) sendAudit.storedOnce++;
    else sendAudit.storedWrong++;
    if (row && !channel.startsWith("community_chat:") && row[3] === null) sendAudit.unconfirmedImessage++;
  }
  return { sendAudit, imessageSplit: split };
}
