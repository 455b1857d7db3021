/**
 * The invariants of reliability.md 8.4 as pure judgements of a Snapshot. `afterKill` holds at any
 * instant, so it is checked after every kill -9: integrity, no duplicate rows, nothing lost at or
 * below the connectors' cursors, every stored message classified as its sender is, exactly one
 * delivery row per allowlisted message, no platform send twice for one Idempotency-Key. `final` holds
 * once a clean run has let everything settle: every source message stored exactly once, every
 * allowlisted one delivered (or dead when the receiver always refused it), every answered send backed
 * by exactly one platform send and one outbound record, file modes, no canary in any log.
 */
import { type ChangeRecord, changeIdentity, identityOf } from "./changes.ts";
import { keyIn } from "./load.ts";
import { DOOM } from "./sink.ts";
import type { Snapshot, SourceItem, StoredEvent, StoredMessage } from "./snapshot.ts";

export interface Verdict {
  name: string;
  held: boolean;
  detail: string;
}

const verdict = (name: string, problems: string[], ok: string): Verdict => ({
  name,
  held: problems.length === 0,
  detail: problems.length === 0 ? ok : `${problems.length} problem(s): ${problems.slice(0, 5).join("; ")}`,
});

const keyOf = (source: string, platformId: string) => `${source}\u0000${platformId}`;

function storedByPlatformId(s: Snapshot): Map<string, StoredMessage[]> {
  const m = new Map<string, StoredMessage[]>();
  for (const row of s.messages) {
    if (row.platform_id === null) continue;
    const k = keyOf(row.source, row.platform_id);
    m.set(k, [...(m.get(k) ?? []), row]);
  }
  return m;
}

/** Platform sends per Idempotency-Key: the Messages stand-in's rows and the bot's posts carrying `<key>`. */
export function platformSends(s: Snapshot): Map<string, number> {
  const n = new Map<string, number>();
  const add = (text: string) => {
    const k = keyIn(text);
    if (k) n.set(k, (n.get(k) ?? 0) + 1);
  };
  for (const item of s.sources) if (item.sender === "own") add(item.text);
  for (const post of s.botPosts) add(post);
  return n;
}

function behindCursor(s: Snapshot): SourceItem[] {
  const device = s.deviceCursor;
  const pending = new Set(device?.pending ?? []);
  return s.sources.filter((i) =>
    i.source === "device_messenger"
      ? device !== null && i.order <= device.position && !pending.has(i.order)
      : s.discordCursor !== null && i.order <= s.discordCursor,
  );
}

export function afterKill(s: Snapshot): Verdict[] {
  const stored = storedByPlatformId(s);
  const out: Verdict[] = [];
  out.push(
    verdict(
      "integrity_check ok, foreign_key_check empty",
      [
        ...(s.integrity === "ok" ? [] : [`integrity_check: ${s.integrity}`]),
        ...(s.foreignKeyViolations === 0 ? [] : [`${s.foreignKeyViolations} foreign key violation(s)`]),
      ],
      "ok",
    ),
  );
  const dups = [...stored.entries()]
    .filter(([, rows]) => rows.length > 1)
    .map(([k]) => k.replace("\u0000", " "));
  out.push(verdict("no duplicate rows", dups, `${s.messages.length} rows, no platform id twice`));
  const behind = behindCursor(s);
  const lost = behind.filter((i) => !stored.has(keyOf(i.source, i.platformId)));
  out.push(
    verdict(
      "nothing lost at or below the cursors",
      lost.map((i) => `${i.source} ${i.platformId} (${i.text})`),
      `${behind.length} source messages at or below the cursors, all stored`,
    ),
  );
  const misfiled: string[] = [];
  for (const item of s.sources) {
    const row = stored.get(keyOf(item.source, item.platformId))?.[0];
    if (!row) continue;
    const want =
      item.sender === "own"
        ? row.direction === "outbound"
        : row.direction === "inbound" &&
          (row.allowlist_status === (item.sender === "allowed" ? "allowed" : "unknown") ||
            (item.deleted === true && row.allowlist_status === "deleted"));
    if (!want)
      misfiled.push(`${item.platformId} from ${item.sender} stored ${row.direction}/${row.allowlist_status}`);
  }
  const known = new Set(s.sources.map((i) => keyOf(i.source, i.platformId)));
  for (const row of s.messages)
    if (row.direction === "inbound" && !known.has(keyOf(row.source, row.platform_id ?? "")))
      misfiled.push(`${row.id}: inbound row with no source message`);
  out.push(
    verdict("stored as the sender is classified", misfiled, "every row matches its source and sender"),
  );
  const allowed = s.messages.filter((m) => m.direction === "inbound" && m.allowlist_status === "allowed");
  const allowedIds = new Set(allowed.map((m) => m.id));
  // A tombstone keeps the delivery row it had (its pending one is dropped when it is deleted).
  const tombstones = new Set(tombstoneIds(s));
  const perMessage = new Map<string, number>();
  for (const d of s.deliveries) perMessage.set(d.message_id, (perMessage.get(d.message_id) ?? 0) + 1);
  const deliveryProblems = [
    ...allowed
      .filter((m) => perMessage.get(m.id) !== 1)
      .map((m) => `${m.id}: ${perMessage.get(m.id) ?? 0} delivery rows`),
    ...[...tombstones]
      .filter((id) => (perMessage.get(id) ?? 0) > 1)
      .map((id) => `${id} (deleted): ${perMessage.get(id)} delivery rows`),
    ...s.deliveries
      .filter((d) => !allowedIds.has(d.message_id) && !tombstones.has(d.message_id))
      .map((d) => `${d.id}: not an allowlisted message`),
  ];
  out.push(
    verdict(
      "exactly one delivery row per allowlisted message",
      deliveryProblems,
      `${allowed.length} allowlisted, ${s.deliveries.length} delivery rows`,
    ),
  );
  const files = new Set(s.attachmentFiles);
  const missing = s.attachments
    .filter((a) => a.file_name !== null && !files.has(a.file_name))
    .map((a) => `${a.id} of ${a.message_id}: ${a.file_name} missing`);
  out.push(
    verdict(
      "every stored attachment has its bytes",
      missing,
      `${s.attachments.length} attachment records, every file present`,
    ),
  );
  const twice = [...platformSends(s).entries()]
    .filter(([, n]) => n > 1)
    .map(([k, n]) => `${k} sent ${n} times`);
  out.push(
    verdict(
      "no platform send twice for one Idempotency-Key",
      twice,
      `${s.sends.length} keys, none sent twice`,
    ),
  );
  out.push(eventsOnce(s), changedText(s));
  return out;
}

/** Ids of stored messages that are tombstones. */
function tombstoneIds(s: Snapshot): string[] {
  return s.messages.filter((m) => m.allowlist_status === "deleted").map((m) => m.id);
}

/** A stored event's identity, as changes.ts names the change it records (pure). */
export function eventIdentity(e: StoredEvent): string {
  let data: { text?: string; emoji?: string } = {};
  try {
    data = JSON.parse(e.data) as typeof data;
  } catch {}
  return changeIdentity(e.source, e.platform_id ?? "", e.kind, {
    ...(data.text === undefined ? {} : { text: data.text }),
    ...(data.emoji === undefined ? {} : { emoji: data.emoji }),
    reactor: e.sender_id,
  });
}

/**
 * An edit event whose text was purged: its message was deleted since (extensions.md §4), so it is counted
 * per message (`purgedEdits`), never matched by text.
 */
export const purged = (e: StoredEvent) => e.kind === "message.edited" && e.data === "{}";

function eventsByIdentity(s: Snapshot): Map<string, StoredEvent[]> {
  const m = new Map<string, StoredEvent[]>();
  for (const e of s.events) {
    if (purged(e)) continue;
    const k = eventIdentity(e);
    m.set(k, [...(m.get(k) ?? []), e]);
  }
  return m;
}

/** The purged edit events per changed message (source and platform id). */
function purgedEdits(s: Snapshot): Map<string, StoredEvent[]> {
  const m = new Map<string, StoredEvent[]>();
  for (const e of s.events.filter(purged)) {
    const k = keyOf(e.source, e.platform_id ?? "");
    m.set(k, [...(m.get(k) ?? []), e]);
  }
  return m;
}

/** Edit changes made to each message (source and platform id). */
function editsMade(changes: readonly ChangeRecord[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of changes.filter((x) => x.kind === "message.edited"))
    m.set(keyOf(c.source, c.target), (m.get(keyOf(c.source, c.target)) ?? 0) + 1);
  return m;
}

/**
 * No change stored as two events, and no event for a change the world did not make (any instant); an edit
 * event without its text only on a deleted message, and no more of them than edits made to it.
 */
export function eventsOnce(s: Snapshot): Verdict {
  const made = new Set(s.changes.map(identityOf));
  const problems: string[] = [];
  for (const [k, es] of eventsByIdentity(s)) {
    if (!made.has(k)) problems.push(`${es.map((e) => e.id).join(",")}: no such change (${k})`);
    else if (es.length > 1)
      problems.push(`${k}: ${es.length} events (${es.map((e) => e.dedupe_key).join(", ")})`);
  }
  const rows = storedByPlatformId(s);
  const edits = editsMade(s.changes);
  for (const [k, es] of purgedEdits(s)) {
    const name = k.replace("\u0000", " ");
    if (rows.get(k)?.[0]?.allowlist_status !== "deleted")
      problems.push(`${name}: ${es.length} edit event(s) without text on a message not deleted`);
    else if (es.length > (edits.get(k) ?? 0))
      problems.push(`${name}: ${es.length} purged edit events, ${edits.get(k) ?? 0} edits made`);
  }
  return verdict(
    "no change stored as two events, no event without its change",
    problems,
    `${s.events.length} events, each for one change made`,
  );
}

/**
 * Each changed message as its events say it is now (any instant, since an event and its change commit
 * together): deleted (an event for its delete) a tombstone with its text purged, else the text of its
 * newest edit that has an event (its first text when none); and no tombstone without its delete event.
 */
export function changedText(s: Snapshot): Verdict {
  const events = eventsByIdentity(s);
  const rows = storedByPlatformId(s);
  const byTarget = new Map<string, ChangeRecord[]>();
  for (const c of s.changes) {
    const k = keyOf(c.source, c.target);
    byTarget.set(k, [...(byTarget.get(k) ?? []), c]);
  }
  const problems: string[] = [];
  let edited = 0;
  let deleted = 0;
  for (const [k, cs] of byTarget) {
    const row = rows.get(k)?.[0];
    if (!row) continue;
    const name = k.replace("\u0000", " ");
    const done = cs.filter((c) => events.has(identityOf(c)));
    if (done.some((c) => c.kind === "message.deleted")) {
      deleted += 1;
      if (row.allowlist_status !== "deleted" || row.text !== "")
        problems.push(`${name}: deleted, yet ${row.allowlist_status} with text "${row.text}"`);
      continue;
    }
    const last = done
      .filter((c) => c.kind === "message.edited")
      .sort((a, b) => a.n - b.n)
      .at(-1);
    if (last) edited += 1;
    const want = last?.text ?? cs[0]?.original ?? "";
    if (row.allowlist_status === "deleted") problems.push(`${name}: a tombstone without its delete event`);
    else if (row.text !== want) problems.push(`${name}: text "${row.text}", its latest edit says "${want}"`);
  }
  const changed = new Set(byTarget.keys());
  for (const m of s.messages)
    if (m.allowlist_status === "deleted" && !changed.has(keyOf(m.source, m.platform_id ?? "")))
      problems.push(`${m.id}: a tombstone no change deleted`);
  return verdict(
    "edited messages carry their latest text, deleted ones are tombstones",
    problems,
    `${byTarget.size} messages changed: ${edited} with their latest edit, ${deleted} tombstones`,
  );
}

/** Every change owed an event (iMessage: all; Discord: dispatched while gw was connected) to an allowlisted message has exactly one. */
export function changesStored(s: Snapshot): Verdict {
  const events = eventsByIdentity(s);
  const owed = s.changes.filter((c) => c.promised !== false && c.targetAllowed);
  // A deleted message's edit events keep no text: its owed edits are counted against them.
  // (between the edits owed and all edits made: a Discord edit a kill caught may be stored or not).
  const purgedBy = purgedEdits(s);
  const owedEdits = editsMade(owed);
  const allEdits = editsMade(s.changes);
  const countOf = (c: ChangeRecord) => {
    const k = keyOf(c.source, c.target);
    const gone = purgedBy.get(k)?.length ?? 0;
    if (c.kind !== "message.edited" || gone === 0) return events.get(identityOf(c))?.length ?? 0;
    return gone >= (owedEdits.get(k) ?? 0) && gone <= (allEdits.get(k) ?? 0) ? 1 : gone;
  };
  const problems = owed
    .filter((c) => countOf(c) !== 1)
    .map(
      (c) =>
        `${c.source} ${c.kind} of ${c.target}${c.text ? ` "${c.text}"` : ""}${c.emoji ? ` ${c.emoji} by ${c.reactor}` : ""}: ${countOf(c)} events`,
    );
  const others = s.changes.filter((c) => !(c.promised !== false && c.targetAllowed));
  const othersStored = others.filter((c) => countOf(c) > 0).length;
  return verdict(
    "every change to an allowlisted message stored as exactly one event",
    problems,
    `${owed.length} owed, ${owed.length} stored once; ${othersStored} of ${others.length} others stored (quarantined targets, Discord changes a kill caught)`,
  );
}

export function final(s: Snapshot): Verdict[] {
  const stored = storedByPlatformId(s);
  const out = afterKill(s);
  const notOnce = s.sources.filter((i) => (stored.get(keyOf(i.source, i.platformId))?.length ?? 0) !== 1);
  out.push(
    verdict(
      "every source message stored exactly once",
      notOnce.map(
        (i) =>
          `${i.source} ${i.platformId} (${i.text}) stored ${stored.get(keyOf(i.source, i.platformId))?.length ?? 0}×`,
      ),
      `${s.sources.length} in, ${s.sources.length} stored`,
    ),
  );

  const rehosted = new Map<string, number>();
  for (const a of s.attachments)
    if (a.file_name !== null) rehosted.set(a.message_id, (rehosted.get(a.message_id) ?? 0) + 1);
  const withFiles = s.sources.filter((i) => i.files > 0);
  const fileProblems = withFiles.flatMap((i) => {
    const row = stored.get(keyOf(i.source, i.platformId))?.[0];
    const n = row ? (rehosted.get(row.id) ?? 0) : 0;
    return n === i.files ? [] : [`${i.platformId}: ${i.files} file(s) posted, ${n} re-hosted`];
  });
  out.push(
    verdict(
      "every posted file re-hosted once with its message",
      fileProblems,
      `${withFiles.length} messages with files, each file re-hosted once`,
    ),
  );

  const byMessage = new Map(s.messages.map((m) => [m.id, m]));
  const accepted = new Map(s.sink.map((d) => [d.deliveryId, d]));
  const tombstones = new Set(tombstoneIds(s));
  const live = s.deliveries.filter((d) => !tombstones.has(d.message_id));
  const count = (status: string) => live.filter((d) => d.status === status).length;
  const allowed = s.messages.filter(
    (m) => m.direction === "inbound" && m.allowlist_status === "allowed",
  ).length;
  const deliveryProblems: string[] = [];
  if (count("pending") + count("delivered") + count("dead") !== allowed || count("pending") !== 0)
    deliveryProblems.push(
      `pending ${count("pending")} + delivered ${count("delivered")} + dead ${count("dead")} vs allowed ${allowed}`,
    );
  for (const d of s.deliveries.filter((x) => tombstones.has(x.message_id) && x.status === "pending"))
    deliveryProblems.push(`${d.id}: pending for a deleted message`);
  for (const d of live) {
    const doomed = byMessage.get(d.message_id)?.text.includes(DOOM) ?? false;
    const got = accepted.get(d.id);
    if (doomed && (d.status !== "dead" || (got?.accepted ?? 0) > 0))
      deliveryProblems.push(`${d.id}: refused every time, yet ${d.status}, accepted ${got?.accepted ?? 0}×`);
    if (!doomed && (d.status !== "delivered" || (got?.accepted ?? 0) < 1))
      deliveryProblems.push(`${d.id}: ${d.status}, accepted by the receiver ${got?.accepted ?? 0}×`);
    if (got && got.messageId !== d.message_id) deliveryProblems.push(`${d.id}: carried ${got.messageId}`);
  }
  const rows = new Set(s.deliveries.map((d) => d.id));
  for (const d of s.sink)
    if (!rows.has(d.deliveryId) && !tombstones.has(d.messageId))
      deliveryProblems.push(`receiver got unknown id ${d.deliveryId}`);
  out.push(
    verdict(
      "every allowlisted message delivered at least once (dead only when always refused)",
      deliveryProblems,
      `${count("delivered")} delivered, ${count("dead")} dead, pending + delivered + dead = ${allowed} allowed`,
    ),
  );

  const sent = platformSends(s);
  const records = new Map<string, StoredMessage[]>();
  for (const m of s.messages) {
    const k = m.direction === "outbound" ? keyIn(m.text) : null;
    if (k) records.set(k, [...(records.get(k) ?? []), m]);
  }
  const sendProblems: string[] = [];
  for (const r of s.sends) {
    const ok = r.answers.filter((a) => a.status === 200);
    const ids = new Set(ok.map((a) => (a.body as { message_id?: string }).message_id));
    const recs = records.get(r.key) ?? [];
    if (r.answers.every((a) => a.status === 0)) sendProblems.push(`${r.key}: never answered`);
    if (recs.length > 1) sendProblems.push(`${r.key}: ${recs.length} outbound records`);
    if (ok.length === 0) continue;
    if (ids.size !== 1) sendProblems.push(`${r.key}: 200 answers with ${ids.size} message ids`);
    if ((sent.get(r.key) ?? 0) !== 1)
      sendProblems.push(`${r.key}: answered 200, sent ${sent.get(r.key) ?? 0}×`);
    const id = [...ids][0] ?? "";
    if (recs.length !== 1 || recs[0]?.id !== id)
      sendProblems.push(
        `${r.key}: answered 200 as ${id}, outbound records ${recs.map((m) => m.id).join(",") || "none"}`,
      );
  }
  out.push(
    verdict(
      "every send answered 200 was sent once and recorded once",
      sendProblems,
      `${s.sends.length} keys, ${[...sent.values()].reduce((a, b) => a + b, 0)} platform sends`,
    ),
  );

  const badModes = s.files
    .filter((f) => f.mode !== (f.dir ? 0o700 : 0o600))
    .map((f) => `${f.path} ${f.mode.toString(8)}`);
  out.push(
    verdict("database, WAL, SHM, logs 0600; their directories 0700", badModes, `${s.files.length} paths`),
  );
  out.push(verdict("no canary secret in any log or output", s.canaryLeaks, "none found"));
  out.push(changesStored(s));
  return out;
}
