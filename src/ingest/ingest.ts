/**
 * The single entry every connector calls with normalised messages. One batch is one IMMEDIATE transaction:
 * each message deduped on (source, platform id), classified against the live allowlist, stored with its
 * attachment records (and a `pending` webhook delivery when allowed), then the connector's cursor. A crash
 * leaves all or none of it, so a connector re-reading from its stored cursor never loses or duplicates a
 * message. Attachments are staged before the call; those of a duplicate or a failed batch are removed here.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Allowlist, AllowlistEntry } from "../allowlist/parse.ts";
import type { AllowlistStatus, ChannelType, Direction, Source } from "../core/envelope.ts";
import type { IdFactory } from "../core/ids.ts";
import type { Clock, Logger } from "../core/ports.ts";
import type { ChannelName } from "../store/channel-list.ts";
import type { Store } from "../store/store.ts";
import type { Arrival } from "./arrivals.ts";
import { applyChange, type ChangeContext, type NormalizedChange, type StoredEvent } from "./changes.ts";

export interface StagedAttachment {
  id: string;
  mime: string;
  sizeBytes: number;
  /** File inside the attachment directory holding the bytes; null when they could not be re-hosted. */
  fileName: string | null;
  platformRef: string | null;
}

export interface NormalizedMessage {
  source: Source;
  /** The platform's own id (chat.db GUID, Discord snowflake): the dedupe key. */
  platformId: string;
  channel: { id: string; type: ChannelType; platformRef: string };
  sender: { id: string; displayName: string };
  /** The Messages service it came over (`message.service`; iMessage, SMS, RCS...): what the allowlist trusts. */
  service?: string | null;
  text: string;
  replyToPlatformId: string | null;
  timestampMs: number;
  attachments: readonly StagedAttachment[];
  raw: Record<string, unknown>;
  /** `outbound` for the owner's own messages typed outside gw: stored for context, never pushed. */
  direction: Direction;
}

export interface IngestBatch {
  source: Source;
  messages: readonly NormalizedMessage[];
  /** The connector position after this batch; null leaves the cursor as it is. */
  cursor: string | null;
  /** The connector's state to keep with the cursor (written only with a cursor; undefined keeps it). */
  cursorState?: string;
  /** A position inside one channel (decimal integer), kept only if later than the stored one. */
  channelCursor?: { channelId: string; position: string };
  /** Changes to stored messages (edits, deletes, reactions), applied after the batch's messages. */
  changes?: readonly NormalizedChange[];
  /** Channels' current names and participants, as the platform says (the channel list's names). */
  channelNames?: readonly ChannelName[];
}

export type IngestOutcome =
  | { status: "stored"; id: string; allowlistStatus: AllowlistStatus; deliveryId: string | null }
  | { status: "duplicate"; id: string }
  /** The owner's own message turned out to be a send made through gw: linked to that record. */
  | { status: "linked"; id: string };

/** How far apart a send's record and its echo on the platform may be (platform clocks, slow writes). */
export const ECHO_WINDOW_MS = 2 * 60 * 1000;

/** Text as compared when matching an echo to a send: NFC, whitespace collapsed, trimmed. */
export function comparableText(text: string): string {
  return text.normalize("NFC").replace(/\s+/g, " ").trim();
}

export interface IngestDeps {
  store: Store;
  allowlist: () => Allowlist;
  ids: IdFactory;
  clock: Clock;
  webhooksEnabled: boolean;
  /** What is pushed when webhooks are on: `message` and event kinds (GW_WEBHOOK_EVENTS; default message). */
  webhookKinds?: ReadonlySet<string>;
  attachmentDir: string;
  log: Logger;
  /** Called after a commit that queued webhook deliveries (wakes the dispatcher). */
  onDeliveriesQueued?: () => void;
  /** Called after a commit with the allowlisted inbound messages it stored (wakes long polls). */
  announce?: (arrivals: Arrival[]) => void;
  /** Called after a commit with the visible events it stored (wakes GET /events and channel pushes). */
  announceEvents?: (events: StoredEvent[]) => void;
}

export type Ingest = (batch: IngestBatch) => IngestOutcome[];

/** What one batch's transaction keeps while it stores its messages. */
interface BatchState {
  now: number;
  allowlist: Allowlist;
  /** Channels the batch saw inbound (recorded once each, with the batch's last reference). */
  observedChannels: Map<string, { id: string; type: ChannelType; platformRef: string; source: Source }>;
  /** The latest read-run end, looked up once per batch: later messages need no run split. */
  runEnd: { value: number | null } | null;
}

const duplicateOf = (store: Store, m: NormalizedMessage): IngestOutcome => ({
  status: "duplicate",
  id: store.messages.idByPlatformId(m.source, m.platformId) as string,
});

/**
 * The owner's own message that echoes a send made through gw (same channel and text, within ECHO_WINDOW_MS,
 * not yet linked): linked to that record, or null.
 */
function linkEcho(store: Store, m: NormalizedMessage): IngestOutcome | null {
  if (store.messages.idByPlatformId(m.source, m.platformId)) return duplicateOf(store, m);
  const text = comparableText(m.text);
  const send = store.messages
    .unlinkedOutbound(m.source, m.channel.id, m.timestampMs - ECHO_WINDOW_MS, m.timestampMs + ECHO_WINDOW_MS)
    .find((r) => comparableText(r.text) === text);
  return send && store.messages.linkPlatformId(send.id, m.platformId)
    ? { status: "linked", id: send.id }
    : null;
}

/** Inserts the message and its attachment records unless it is stored already; false when it is. */
function insertMessage(
  store: Store,
  m: NormalizedMessage,
  row: { id: string; status: AllowlistStatus; entry: AllowlistEntry | null; now: number },
): boolean {
  const stored = store.messages.insertIfNew({
    id: row.id,
    source: m.source,
    platform_id: m.platformId,
    channel_id: m.channel.id,
    channel_type: m.channel.type,
    sender_id: m.sender.id,
    sender_name: row.entry?.display_name ?? m.sender.displayName,
    person_id: row.entry?.person_id ?? null,
    text: m.text,
    reply_to: m.replyToPlatformId ? store.messages.idByPlatformId(m.source, m.replyToPlatformId) : null,
    message_ts: m.timestampMs,
    direction: m.direction,
    allowlist_status: row.status,
    raw: JSON.stringify(m.raw),
    created_at: row.now,
  });
  if (!stored) return false;
  for (const a of m.attachments)
    store.attachments.insert({
      id: a.id,
      message_id: row.id,
      mime: a.mime,
      size_bytes: a.sizeBytes,
      file_name: a.fileName,
      platform_ref: a.platformRef,
      created_at: row.now,
    });
  return true;
}

function storeOne(deps: IngestDeps, b: BatchState, m: NormalizedMessage): IngestOutcome {
  const { store, ids } = deps;
  if (m.direction === "outbound") {
    const echo = linkEcho(store, m);
    if (echo) return echo;
  }
  const entry = m.direction === "inbound" ? b.allowlist.admit(m.source, m.sender.id, m.service) : null;
  const status: AllowlistStatus = m.direction === "outbound" ? "outbound" : entry ? "allowed" : "unknown";
  const id = ids.message();
  if (!insertMessage(store, m, { id, status, entry, now: b.now })) return duplicateOf(store, m);
  if (m.direction === "inbound") b.observedChannels.set(m.channel.id, { ...m.channel, source: m.source });
  let deliveryId: string | null = null;
  if (status === "allowed") {
    b.runEnd ??= { value: store.reads.latestRunEnd() };
    if (b.runEnd.value !== null && m.timestampMs <= b.runEnd.value)
      store.reads.splitRunsAt({ message_ts: m.timestampMs, id, source: m.source, channel_id: m.channel.id });
    if (deps.webhooksEnabled && (deps.webhookKinds?.has("message") ?? true)) {
      deliveryId = ids.delivery();
      store.deliveries.insertPending(deliveryId, id, m.channel.id, b.now);
    }
  }
  return { status: "stored", id, allowlistStatus: status, deliveryId };
}

/** The batch in one transaction: its messages, the channels observed, the cursor and channel position. */
/** What a batch stored: one outcome per message, the events of its changes, files to purge after it. */
interface BatchResult {
  outcomes: IngestOutcome[];
  events: StoredEvent[];
  purgeFiles: string[];
}

const NO_KINDS: ReadonlySet<string> = new Set();

function storeBatch(deps: IngestDeps, batch: IngestBatch): BatchResult {
  const { store } = deps;
  return store.transaction(() => {
    const b: BatchState = {
      now: deps.clock.now(),
      allowlist: deps.allowlist(),
      observedChannels: new Map(),
      runEnd: null,
    };
    const outcomes = batch.messages.map((m) => {
      if (m.source !== batch.source) throw new Error(`batch for ${batch.source} holds a ${m.source} message`);
      return storeOne(deps, b, m);
    });
    for (const c of b.observedChannels.values()) store.channels.observeInbound(c, b.now);
    if (batch.cursor !== null)
      store.cursors.set(batch.source, batch.cursor, b.now, batch.cursorState ?? null);
    if (batch.channelCursor)
      store.channels.advanceCursor(batch.channelCursor.channelId, batch.channelCursor.position);
    if (batch.channelNames) store.channelList.setNames(batch.channelNames);
    const ctx: ChangeContext = {
      store,
      ids: deps.ids,
      allowlist: b.allowlist,
      now: b.now,
      webhookKinds: deps.webhooksEnabled ? (deps.webhookKinds ?? NO_KINDS) : NO_KINDS,
      purgeFiles: [],
    };
    const events = (batch.changes ?? []).flatMap((c) => applyChange(ctx, c) ?? []);
    return { outcomes, events, purgeFiles: ctx.purgeFiles };
  });
}

/**
 * After the commit: a deleted message's files removed, the dispatcher woken for queued deliveries, long
 * polls for allowed messages and visible events.
 */
function announce(deps: IngestDeps, batch: IngestBatch, r: BatchResult): void {
  const { outcomes, events } = r;
  for (const f of r.purgeFiles) rmSync(join(deps.attachmentDir, f), { force: true });
  for (const o of outcomes)
    if (o.status === "stored")
      deps.log.debug({ id: o.id, status: o.allowlistStatus, source: batch.source }, "message stored");
  for (const e of events) deps.log.debug({ id: e.id, kind: e.kind, visible: e.visible }, "event stored");
  if (
    outcomes.some((o) => o.status === "stored" && o.deliveryId !== null) ||
    events.some((e) => e.deliveryId !== null)
  )
    deps.onDeliveriesQueued?.();
  const visible = events.filter((e) => e.visible);
  if (visible.length > 0) deps.announceEvents?.(visible);
  if (!deps.announce) return;
  const arrivals = batch.messages
    .filter((_, i) => {
      const o = outcomes[i];
      return o?.status === "stored" && o.allowlistStatus === "allowed";
    })
    .map((m) => ({ source: m.source, channelId: m.channel.id, messageTs: m.timestampMs }));
  if (arrivals.length > 0) deps.announce(arrivals);
}

/** Removes staged attachment files (of messages not stored: a duplicate, a failed or dropped batch). */
export function removeStaged(attachmentDir: string, staged: Iterable<StagedAttachment>): void {
  for (const a of staged) if (a.fileName) rmSync(join(attachmentDir, a.fileName), { force: true });
}

export function createIngest(deps: IngestDeps): Ingest {
  const discard = (messages: readonly NormalizedMessage[]) =>
    removeStaged(
      deps.attachmentDir,
      messages.flatMap((m) => m.attachments),
    );
  return (batch) => {
    let result: BatchResult;
    try {
      result = storeBatch(deps, batch);
    } catch (err) {
      discard(batch.messages);
      throw err;
    }
    const { outcomes } = result;
    discard(batch.messages.filter((_, i) => outcomes[i]?.status === "duplicate"));
    announce(deps, batch, result);
    return outcomes;
  };
}
