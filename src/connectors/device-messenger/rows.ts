/**
 * Turning chat.db rows into gw messages and changes (pure). `classifyRow` decides deliver or skip (chatdb.md §5):
 * ordinary messages are delivered; tapbacks/sticker reactions/poll votes, group events, other system
 * rows and empty rows are skipped. `channelOf` maps a chat to gw's channel id (decisions.md): the
 * handle for one-to-one chats, the chat GUID for groups (`chat.style` 43), failing closed on an unknown
 * style. `bodyText` takes `text`, else the decoded `attributedBody`, and drops U+FFFC/U+FFFD.
 */
import type { ChannelType } from "../../core/envelope.ts";
import type { ChatDbAttachment, ChatDbRow } from "./chat-db.ts";
import { decodeAttributedBody } from "./typedstream.ts";

export type RowKind =
  | "deliver"
  | "reaction"
  | "group_event"
  | "system"
  | "empty"
  | "unsent"
  | "no_chat"
  | "unknown_chat_style";

const PLACEHOLDERS = /[\uFFFC\uFFFD]/g;
const PLACEHOLDER_RUNS = /[\uFFFC\uFFFD]+/;

/**
 * The text a person sees in a body (decisions.md, extensions.md §5): the placeholders U+FFFC (an
 * attachment) and U+FFFD (app content) at its ends dropped, and a run of them between two text parts a line
 * break, so "test 1", a photo, "test 2" never reads `test 1test 2`. Pure.
 */
export function visibleText(raw: string): string {
  return raw
    .split(PLACEHOLDER_RUNS)
    .filter((part) => part !== "")
    .join("\n");
}

/** A row's text as stored, placeholders included: `text` when it has content, else the decoded body. */
export function rowText(row: Pick<ChatDbRow, "text" | "body">): string | null {
  const plain = row.text ?? "";
  if (plain.replace(PLACEHOLDERS, "").trim() !== "") return plain;
  return decodeAttributedBody(row.body) ?? (plain || null);
}

/** The visible text of a row (`visibleText` of `rowText`). */
export function bodyText(row: Pick<ChatDbRow, "text" | "body">, raw = rowText(row)): string | null {
  return raw === null ? null : visibleText(raw);
}

/** How many attachments a row's text announces: its U+FFFC characters (chatdb.md §8 pitfall 2). */
export function announcedAttachments(raw: string | null): number {
  if (!raw) return 0;
  let n = 0;
  // indexOf, not a for-of over the code points: this runs for every row of a catch-up.
  for (let at = raw.indexOf("\uFFFC"); at !== -1; at = raw.indexOf("\uFFFC", at + 1)) n += 1;
  return n;
}

export function isReaction(associatedType: number | null): boolean {
  const t = associatedType ?? 0;
  return t === 1000 || t === 4000 || (t >= 2000 && t <= 2999) || (t >= 3000 && t <= 3999);
}

/** Tapback kinds 2000–2007 (a removal is the same kind + 1000); 2006 takes the row's own emoji. */
const TAPBACK_EMOJI: Record<number, string> = {
  0: "❤️",
  1: "👍",
  2: "👎",
  3: "😂",
  4: "‼️",
  5: "❓",
  7: "🖼️",
};

/** The GUID a tapback points at: `p:N/<GUID>` (part N), `bp:<GUID>` (balloon) or a bare GUID. */
export function tapbackTarget(associated: string | null): string | null {
  if (!associated) return null;
  const slash = associated.indexOf("/");
  const guid =
    associated.startsWith("p:") && slash > 0
      ? associated.slice(slash + 1)
      : associated.startsWith("bp:")
        ? associated.slice(3)
        : associated;
  return guid.trim() === "" ? null : guid;
}

/** A tapback row (2000–2007 adds, 3000–3007 removes) as a reaction to its target; null for any other row. */
export function tapbackOf(
  row: Pick<ChatDbRow, "associated_message_type" | "associated_message_guid" | "associated_message_emoji">,
): { targetGuid: string; emoji: string; added: boolean } | null {
  const t = row.associated_message_type ?? 0;
  const added = t >= 2000 && t <= 2007;
  if (!added && !(t >= 3000 && t <= 3007)) return null;
  const emoji = t % 1000 === 6 ? row.associated_message_emoji : TAPBACK_EMOJI[t % 1000];
  const targetGuid = tapbackTarget(row.associated_message_guid);
  return emoji && targetGuid ? { targetGuid, emoji, added } : null;
}

export function classifyRow(
  row: ChatDbRow,
  visibleAttachments: number,
  text = bodyText(row),
  unsent = false,
): RowKind {
  if (isReaction(row.associated_message_type)) return "reaction";
  const item = row.item_type ?? 0;
  if (item >= 1 && item <= 3) return "group_event";
  if (item !== 0) return "system";
  if (row.chat_guid === null) return "no_chat";
  if (channelOf(row) === null) return "unknown_chat_style";
  if (unsent) return "unsent";
  if ((text === null || text.trim() === "") && visibleAttachments === 0) return "empty";
  return "deliver";
}

/** gw's channel for a row's chat, or null when the chat's kind cannot be told (fail closed). */
export function channelOf(row: Pick<ChatDbRow, "chat_guid" | "chat_style" | "chat_identifier">): {
  id: string;
  type: ChannelType;
  platformRef: string;
} | null {
  const guid = row.chat_guid;
  if (guid === null) return null;
  const group = row.chat_style === 43 ? true : row.chat_style === 45 ? false : guessGroupFromGuid(guid);
  if (group === null) return null;
  if (group) return { id: guid, type: "group", platformRef: guid };
  const handle = row.chat_identifier ?? guid.split(";").at(-1) ?? "";
  return handle ? { id: handle, type: "dm", platformRef: guid } : null;
}

function guessGroupFromGuid(guid: string): boolean | null {
  if (guid.includes(";+;")) return true;
  if (guid.includes(";-;")) return false;
  return null;
}

const UTI_MIME: Record<string, string> = {
  "public.jpeg": "image/jpeg",
  "public.png": "image/png",
  "public.heic": "image/heic",
  "public.heif": "image/heif",
  "com.compuserve.gif": "image/gif",
  "public.tiff": "image/tiff",
  "public.mpeg-4": "video/mp4",
  "com.apple.quicktime-movie": "video/quicktime",
  "com.apple.coreaudio-format": "audio/x-caf",
  "public.mp3": "audio/mpeg",
  "public.mpeg-4-audio": "audio/mp4",
  "com.adobe.pdf": "application/pdf",
  "public.plain-text": "text/plain",
  "public.vcard": "text/vcard",
};

const EXT_MIME: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  heic: "image/heic",
  gif: "image/gif",
  mp4: "video/mp4",
  mov: "video/quicktime",
  caf: "audio/x-caf",
  m4a: "audio/mp4",
  mp3: "audio/mpeg",
  pdf: "application/pdf",
  txt: "text/plain",
  vcf: "text/vcard",
};

/** MIME of an attachment: `mime_type`, else from `uti`, else from the file extension, else octet-stream. */
export function mimeOf(
  a: Pick<ChatDbAttachment, "mime_type" | "uti" | "transfer_name" | "filename">,
): string {
  if (a.mime_type) return a.mime_type;
  if (a.uti && UTI_MIME[a.uti]) return UTI_MIME[a.uti] as string;
  const name = a.transfer_name ?? a.filename ?? "";
  const ext = name.includes(".") ? name.split(".").at(-1)?.toLowerCase() : undefined;
  return (ext && EXT_MIME[ext]) || "application/octet-stream";
}

/** The columns kept in the envelope's `raw` (no blobs, 64-bit values as strings). */
export function rawOf(row: ChatDbRow, attachments: readonly ChatDbAttachment[]): Record<string, unknown> {
  return {
    ROWID: row.rowid,
    guid: row.guid,
    service: row.service,
    account: row.account,
    handle: row.handle,
    is_from_me: row.is_from_me,
    date: row.date_raw,
    item_type: row.item_type,
    associated_message_type: row.associated_message_type,
    balloon_bundle_id: row.balloon_bundle_id,
    thread_originator_guid: row.thread_originator_guid,
    chat_guid: row.chat_guid,
    chat_style: row.chat_style,
    chat_identifier: row.chat_identifier,
    chat_service: row.chat_service,
    attachments: attachments.map((a) => ({
      guid: a.guid,
      transfer_name: a.transfer_name,
      mime_type: a.mime_type,
      uti: a.uti,
      transfer_state: a.transfer_state,
      total_bytes: a.total_bytes,
    })),
  };
}
