/**
 * From chat.db rows to what the planner and ingest take (runner): a row's planner input (visible
 * attachments, whether they are ready, whether it still waits for its chat join: at most
 * NO_CHAT_WAIT_MS, then skipped with a warning) and the normalised message, its attachments copied into
 * the store INBOUND_FILES_AT_ONCE at a time. Rows the cursor passed are forgotten (`forgetUpTo`), so the
 * chat waits cannot grow. A date no timestamp can hold is stamped with the time it was read.
 */
import type { IdFactory } from "../../core/ids.ts";
import type { Names } from "../../core/names.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import { createSlots } from "../../core/slots.ts";
import type { NormalizedChange } from "../../ingest/changes.ts";
import type { NormalizedMessage } from "../../ingest/ingest.ts";
import { INBOUND_FILES_AT_ONCE } from "../connector.ts";
import { attachmentState, stageAttachments } from "./attachments.ts";
import type { ChatDbAttachment, ChatDbRow } from "./chat-db.ts";
import type { RowInput } from "./plan.ts";
import { editOf, rowContent } from "./row-content.ts";
import { announcedAttachments, channelOf, classifyRow, rawOf, tapbackOf } from "./rows.ts";
import { OWN_SENDER } from "./sender.ts";

export const NO_CHAT_WAIT_MS = 10_000;
/** The instants an envelope timestamp can hold: 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z. */
const FIRST_DATE_MS = -62_135_596_800_000;
const LAST_DATE_MS = 253_402_300_799_999;

/**
 * False for a date outside years 0001–9999 (a float of 1e300, seconds taken for nanoseconds): such a row is
 * stamped with the time it was read, its raw date kept in `raw`.
 */
export const representable = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= FIRST_DATE_MS && ms <= LAST_DATE_MS;

export interface RowMessageDeps {
  /** Contacts names for senders (the allowlist's display name still wins, at ingest). */
  names: Names;
  attachmentDir: string;
  attachmentMaxBytes: number;
  homeDir: string;
  attachmentWaitMs: number;
  ids: IdFactory;
  clock: Clock;
  log: Logger;
}

/** A handle as its sender: the Contacts name when the address book has one, else the handle. */
const senderOf = (row: ChatDbRow, names: Names) => ({
  id: row.handle ?? "",
  displayName: (row.handle ? names.nameOf(row.handle, row.handle_country) : null) ?? row.handle ?? "",
});

/** A tapback row as a reaction change (null when its kind or target cannot be read). */
function reactionOf(row: ChatDbRow, now: number, names: Names): NormalizedChange | null {
  const t = tapbackOf(row);
  if (!t) return null;
  const own = row.is_from_me === 1;
  return {
    kind: "reaction",
    source: "device_messenger",
    targetPlatformId: t.targetGuid,
    emoji: t.emoji,
    added: t.added,
    reactor: own ? OWN_SENDER : senderOf(row, names),
    service: row.service,
    byOwner: own,
    timestampMs: representable(row.date_ms) ? row.date_ms : now,
    dedupeKey: `imessage:tapback:${row.guid}`,
  };
}

/** An edited or unsent row as its change; the key holds the edit's time, so each new edit is new. */
function editChangeOf(row: ChatDbRow, now: number): NormalizedChange | null {
  const e = editOf(row);
  if (!e) return null;
  const at = row.date_edited !== null && representable(row.date_edited) ? row.date_edited : now;
  const base = { source: "device_messenger" as const, targetPlatformId: row.guid, timestampMs: at };
  return e.kind === "delete"
    ? { ...base, kind: "delete", dedupeKey: `imessage:delete:${row.guid}` }
    : {
        ...base,
        kind: "edit",
        text: e.text,
        // The edit time and the text: a partial unsend may keep the edit time, yet changes the text.
        dedupeKey: `imessage:edit:${row.guid}:${row.date_edited}:${Bun.hash(e.text).toString(36)}`,
      };
}

export function createRowMessages(deps: RowMessageDeps) {
  const { log } = deps;
  /** Rows without a chat join yet, by ROWID: when the reader first saw them. */
  const waitingForChat = new Map<number, number>();
  const copySlot = createSlots(INBOUND_FILES_AT_ONCE);

  /** Whether a fresh row without a chat should still hold the read for its join. */
  const holdForChat = (
    row: ChatDbRow,
    attachments: number,
    text: string | null,
    unsent: boolean,
  ): boolean => {
    if (classifyRow(row, attachments, text, unsent) !== "no_chat") {
      waitingForChat.delete(row.rowid);
      return false;
    }
    const first = waitingForChat.get(row.rowid) ?? deps.clock.now();
    waitingForChat.set(row.rowid, first);
    const hold = deps.clock.now() - first < NO_CHAT_WAIT_MS;
    if (!hold) log.warn({ rowid: row.rowid, guid: row.guid }, "chat.db row never joined a chat; skipped");
    return hold;
  };

  /** The planner's view of a row: its visible attachments, whether they are all ready, and the chat wait. */
  const inputOf = (row: ChatDbRow, all: readonly ChatDbAttachment[], fresh: boolean): RowInput => {
    const attachments = all.filter((a) => a.hide_attachment !== 1);
    const content = rowContent(row);
    const { text, unsent, transcript } = content;
    const announced = announcedAttachments(content.stored);
    const ready =
      announced <= attachments.length &&
      attachments.every((a) => {
        const s = attachmentState(a, { maxBytes: deps.attachmentMaxBytes, homeDir: deps.homeDir });
        return s === "ready" || "skip" in s;
      });
    const hold = fresh && holdForChat(row, Math.max(attachments.length, announced), text, unsent);
    return { row, attachments, text, announced, ready, holdForChat: hold, unsent, transcript };
  };

  const toMessage = async (input: RowInput, late: boolean): Promise<NormalizedMessage | null> => {
    const { row, attachments } = input;
    const channel = channelOf(row);
    if (!channel) return null;
    if (late)
      log.warn(
        { rowid: row.rowid, guid: row.guid, waited_ms: deps.attachmentWaitMs },
        "attachments still not ready; the message is delivered without them",
      );
    const own = row.is_from_me === 1;
    const dated = representable(row.date_ms);
    if (!dated)
      log.warn(
        { rowid: row.rowid, guid: row.guid, date: row.date_raw },
        "chat.db row has a date no timestamp can hold; it is stamped with the time it was read",
      );
    return {
      source: "device_messenger",
      platformId: row.guid,
      channel,
      sender: own ? OWN_SENDER : senderOf(row, deps.names),
      service: row.service,
      text: input.text ?? "",
      replyToPlatformId: row.thread_originator_guid,
      timestampMs: dated ? row.date_ms : deps.clock.now(),
      attachments: await stageAttachments(attachments, {
        dir: deps.attachmentDir,
        maxBytes: deps.attachmentMaxBytes,
        homeDir: deps.homeDir,
        ids: deps.ids,
        log,
        messageGuid: row.guid,
        slot: copySlot,
      }),
      raw: { ...rawOf(row, attachments), ...(input.transcript ? { audio_transcript: true } : {}) },
      direction: own ? "outbound" : "inbound",
    };
  };

  return {
    inputOf,
    toMessage,
    reactionOf: (row: ChatDbRow, now: number) => reactionOf(row, now, deps.names),
    editChangeOf,
    /** Rows the cursor passed (delivered or skipped) are never looked at again. */
    forgetUpTo(position: number): void {
      for (const rowid of waitingForChat.keys()) if (rowid <= position) waitingForChat.delete(rowid);
    },
    waitingForChat: () => waitingForChat.size,
  };
}

export type RowMessages = ReturnType<typeof createRowMessages>;
