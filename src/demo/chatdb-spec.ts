/**
 * What gw's chat.db writer takes and gives (chatdb-writer.ts): the shapes of chats, messages and
 * attachments as Messages stores them, the writer's interface, and the pure helpers both sides use (Apple
 * dates in exact nanoseconds, GUIDs, the MIME type and UTI Messages records for a file name).
 */
import type { Database } from "bun:sqlite";
import { extname } from "node:path";

export const APPLE_EPOCH_MS = 978_307_200_000;
export const NS_PER_MS = 1_000_000n;
/** `attachment.transfer_state` of a finished transfer. */
export const TRANSFER_FINISHED = 5;

export interface ChatDbWriterOptions {
  /** Schema applied to a database that has no `message` table (default: our Sequoia subset). */
  schemaSql?: string;
  /** Clock in epoch milliseconds (default `Date.now`). */
  now?: () => number;
  /** The local account written to `message.account` (default `E:me@example.com`). */
  account?: string;
}

export interface ChatSpec {
  guid: string;
  style: 43 | 45;
  chatIdentifier: string;
  serviceName?: string;
  displayName?: string | null;
  participants: string[];
}

export interface AttachmentSpec {
  /** Stored as given in `attachment.filename` (may start with `~`). */
  path: string;
  /** Undefined: guessed from the extension; null: stored as NULL. */
  mimeType?: string | null;
  uti?: string | null;
  transferName?: string;
  /** Default: the file's size when it exists, else 0. */
  totalBytes?: number;
  transferState?: number;
}

export interface MessageSpec {
  chatGuid: string | null;
  /** Handle id of the sender; for an own message, the handle it went to (usually null: handle_id 0). */
  from: string | null;
  text: string;
  /** Default "attributedBody": `text` NULL and the body only in `attributedBody`, as modern macOS does. */
  bodyForm?: "text" | "attributedBody" | "both";
  isFromMe?: boolean;
  /** Epoch milliseconds (default now). */
  dateMs?: number;
  /** Exact `message.date` in nanoseconds since 2001; wins over dateMs. */
  dateNs?: bigint;
  guid?: string;
  associatedMessageType?: number;
  associatedMessageGuid?: string | null;
  /** A custom-emoji tapback's emoji (associated_message_type 2006/3006). */
  associatedMessageEmoji?: string | null;
  itemType?: number;
  groupActionType?: number;
  groupTitle?: string | null;
  threadOriginatorGuid?: string | null;
  /** Default "0:0:0" when threadOriginatorGuid is set. */
  threadOriginatorPart?: string | null;
  service?: string;
  attachments?: AttachmentSpec[];
  /** U+FFFC characters for attachments whose rows are written later (`attach`), as Messages does. */
  placeholders?: number;
  /**
   * The body in order, text pieces and attachments interleaved ("test 1", a photo, "test 2"), each its own
   * part; overrides `text` and `attachments`.
   */
  pieces?: (string | AttachmentSpec)[];
  /** A voice message: its one attachment (an audio file) carries this transcript; `is_audio_message` set. */
  audioTranscript?: string;
  /** Default true; false simulates the row landing before its chat_message_join. */
  joinChat?: boolean;
}

export type UnsendShape = "real" | "is_empty" | "retracted" | "summary" | "emptied";

export interface ChatDbWriter {
  /** The open connection, for lookups and for simulating later updates (edits, errors). */
  readonly db: Database;
  handle(id: string, service?: string): number;
  chat(c: ChatSpec): number;
  message(m: MessageSpec): { rowid: number; guid: string };
  joinChat(rowid: number, chatGuid: string): void;
  /** Joins one more attachment to a message already written (an attachment row landing late). */
  attach(rowid: number, a: AttachmentSpec): { guid: string };
  /**
   * Edits a message as Messages does (chatdb-bodies.ts): `text` NULL, the body takes the new text, the
   * summary's `ec` history gains it, `date_edited` set. Throws on a release that cannot edit (before Ventura).
   */
  edit(rowid: number, text: string): void;
  /**
   * Unsends a message. `real` (default), as a Mac does: the body an empty string, the summary listing every
   * part in `rp`, `date_retracted` and `date_edited` set (`clearRetraction` clears the first later, as
   * Messages does). The other shapes write one signature alone: `is_empty` (the older shape: body NULL,
   * `is_empty = 1`, `date_edited`), `retracted` (`date_retracted` only), `summary` (`rp` only), `emptied`
   * (`date_edited` and an empty body). Throws on a release that cannot unsend.
   */
  unsend(rowid: number, shape?: UnsendShape): void;
  /** Unsends some parts of a message: `rp` lists them, `date_edited` set. */
  unsendParts(rowid: number, parts: readonly number[]): void;
  /** Messages clears `date_retracted` some time after an unsend. */
  clearRetraction(rowid: number): void;
  /**
   * Renames a group as Messages does: `chat.display_name` changes and a group event row (`item_type` 2,
   * `group_title`) records who did it (`by`, a handle; null: the owner).
   */
  renameChat(chatGuid: string, name: string, by: string | null): { rowid: number; guid: string };
  /** Updates an attachment as a download progresses. */
  updateAttachment(
    guid: string,
    change: { transferState?: number; path?: string; totalBytes?: number },
  ): void;
  maxRowid(): number;
  close(): void;
}

/** Epoch milliseconds to chat.db nanoseconds since 2001, exactly. */
export function appleNanos(epochMs: number): bigint {
  return BigInt(Math.trunc(epochMs) - APPLE_EPOCH_MS) * NS_PER_MS;
}

/** An uppercase UUID, the form of Messages' message and attachment GUIDs. */
export function appleGuid(): string {
  return crypto.randomUUID().toUpperCase();
}

const FILE_TYPES: Record<string, [mime: string, uti: string]> = {
  jpg: ["image/jpeg", "public.jpeg"],
  jpeg: ["image/jpeg", "public.jpeg"],
  png: ["image/png", "public.png"],
  gif: ["image/gif", "com.compuserve.gif"],
  heic: ["image/heic", "public.heic"],
  mp4: ["video/mp4", "public.mpeg-4"],
  mov: ["video/quicktime", "com.apple.quicktime-movie"],
  caf: ["audio/x-caf", "com.apple.coreaudio-format"],
  m4a: ["audio/x-m4a", "com.apple.m4a-audio"],
  mp3: ["audio/mpeg", "public.mp3"],
  pdf: ["application/pdf", "com.adobe.pdf"],
  txt: ["text/plain", "public.plain-text"],
  vcf: ["text/vcard", "public.vcard"],
};

/** MIME type and UTI Messages would record for a file name; unknown extensions give null and `public.data`. */
export function fileTypeOf(name: string): { mimeType: string | null; uti: string } {
  const known = FILE_TYPES[extname(name).slice(1).toLowerCase()];
  return known ? { mimeType: known[0], uti: known[1] } : { mimeType: null, uti: "public.data" };
}
