/**
 * Changes to stored messages (extensions.md §1), applied by ingest in the batch's transaction: an edit
 * sets the current text, a delete makes a tombstone (text, raw and attachment bytes purged, earlier edit
 * events' texts too, and every delivery of it not yet made dropped: extensions.md §4), a reaction
 * changes nothing; each stores one event, deduplicated by the platform's key, whose visibility is decided
 * here. A change to a message gw never stored, or already deleted, is dropped.
 */
import type { Allowlist } from "../allowlist/parse.ts";
import type { Source } from "../core/envelope.ts";
import type { EventKind } from "../core/event.ts";
import type { IdFactory } from "../core/ids.ts";
import type { EventRow } from "../store/events.ts";
import type { MessageRow } from "../store/messages.ts";
import type { Store } from "../store/store.ts";

interface ChangeBase {
  source: Source;
  /** The platform's id of the message changed (chat.db GUID, Discord snowflake). */
  targetPlatformId: string;
  /** When it happened on the platform (else when gw saw it). */
  timestampMs: number;
  /** Same platform change, same key: a replay or a re-read stores nothing more. */
  dedupeKey: string;
  /** Caused by gw's own API action: stored, never delivered. */
  ownAction?: boolean;
}

export type NormalizedChange =
  | (ChangeBase & { kind: "edit"; text: string })
  | (ChangeBase & { kind: "delete" })
  | (ChangeBase & {
      kind: "reaction";
      emoji: string;
      added: boolean;
      reactor: { id: string; displayName: string };
      /** The Messages service the reaction came over: a reactor counts only over a service they are trusted on. */
      service?: string | null;
      /** The account's owner reacted (iMessage is_from_me). */
      byOwner: boolean;
    });

/** An event stored by a batch: whom to wake, and whether a webhook was queued for it. */
export interface StoredEvent {
  id: string;
  kind: EventKind;
  source: Source;
  channelId: string;
  visible: boolean;
  deliveryId: string | null;
}

export interface ChangeContext {
  store: Store;
  ids: IdFactory;
  allowlist: Allowlist;
  now: number;
  /** Event kinds pushed as webhooks (empty: none). */
  webhookKinds: ReadonlySet<string>;
  /** Stored files to remove once the transaction commits (a deleted message's attachments). */
  purgeFiles: string[];
}

const VISIBLE = new Set(["allowed", "outbound"]);

function kindOf(c: NormalizedChange): EventKind {
  if (c.kind === "edit") return "message.edited";
  if (c.kind === "delete") return "message.deleted";
  return c.added ? "reaction.added" : "reaction.removed";
}

/**
 * An edit of gw's own Discord message is gw's own action, whichever side stores it first: Discord lets
 * only the author edit, and gw stores none of the bot's messages but its own sends.
 */
const ownEdit = (c: NormalizedChange, target: MessageRow) =>
  c.kind === "edit" && c.source === "community_chat" && target.allowlist_status === "outbound";

/** Who did it (a reaction: the reactor, else the message's author) and whether agents may see it. */
function actorOf(ctx: ChangeContext, c: NormalizedChange, target: MessageRow) {
  if (c.kind !== "reaction") {
    const sender = { id: target.sender_id, name: target.sender_name, personId: target.person_id };
    return {
      ...sender,
      visible: VISIBLE.has(target.allowlist_status) && !c.ownAction && !ownEdit(c, target),
    };
  }
  const entry = ctx.allowlist.admit(c.source, c.reactor.id, c.service);
  const visible = VISIBLE.has(target.allowlist_status) && (entry !== null || c.byOwner) && !c.ownAction;
  return {
    id: c.reactor.id,
    name: entry?.display_name ?? c.reactor.displayName,
    personId: entry?.person_id ?? null,
    visible,
  };
}

/** What the change does to the message; the event's data, or null when nothing changed. */
function applyToMessage(ctx: ChangeContext, c: NormalizedChange, target: MessageRow): object | null {
  const { store } = ctx;
  if (c.kind === "reaction") return { emoji: c.emoji };
  if (c.kind === "edit") {
    if (c.text === target.text) return null;
    store.messages.setText(target.id, c.text);
    return { text: c.text, previous_text: target.text };
  }
  for (const a of store.attachments.forMessage(target.id)) {
    if (a.file_name) ctx.purgeFiles.push(a.file_name);
    store.attachments.clearFile(a.id);
  }
  store.messages.markDeleted(target.id);
  store.events.purgeEdits(target.id);
  store.deliveries.dropUndelivered(target.id);
  return {};
}

export function applyChange(ctx: ChangeContext, c: NormalizedChange): StoredEvent | null {
  const { store } = ctx;
  const target = store.messages.byPlatformId(c.source, c.targetPlatformId);
  if (!target || target.allowlist_status === "deleted" || store.events.seen(c.dedupeKey)) return null;
  const actor = actorOf(ctx, c, target);
  const data = applyToMessage(ctx, c, target);
  if (data === null) return null;
  const row: EventRow = {
    id: ctx.ids.event(),
    kind: kindOf(c),
    source: c.source,
    channel_id: target.channel_id,
    message_id: target.id,
    sender_id: actor.id,
    sender_name: actor.name,
    person_id: actor.personId,
    event_ts: c.timestampMs,
    data: JSON.stringify(data),
    dedupe_key: c.dedupeKey,
    visible: actor.visible ? 1 : 0,
    created_at: ctx.now,
  };
  store.events.insert(row);
  let deliveryId: string | null = null;
  if (actor.visible && ctx.webhookKinds.has(row.kind)) {
    deliveryId = ctx.ids.delivery();
    store.deliveries.insertEventPending(deliveryId, target.id, row.id, target.channel_id, ctx.now);
  }
  return {
    id: row.id,
    kind: row.kind,
    source: row.source,
    channelId: row.channel_id,
    visible: actor.visible,
    deliveryId,
  };
}
