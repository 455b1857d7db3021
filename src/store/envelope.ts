/**
 * Maps stored rows to the Envelope (pure). Attachment URLs are adapter-hosted:
 * `<attachment base URL>/attachments/<id>`; attachments whose bytes are gone are still listed.
 */
import type { Envelope } from "../core/envelope.ts";
import { formatTimestamp } from "../core/time.ts";
import type { AttachmentRow } from "./attachments.ts";
import type { MessageRow } from "./messages.ts";

export function toEnvelope(
  row: MessageRow,
  attachments: readonly AttachmentRow[],
  baseUrl: string,
): Envelope {
  return {
    id: row.id,
    source: row.source,
    channel_id: row.channel_id,
    channel_type: row.channel_type,
    sender: { id: row.sender_id, display_name: row.sender_name, person_id: row.person_id },
    text: row.text,
    attachments: attachments.map((a) => ({
      id: a.id,
      url: `${baseUrl}/attachments/${a.id}`,
      mime: a.mime,
      size_bytes: a.size_bytes,
    })),
    reply_to: row.reply_to,
    timestamp: formatTimestamp(row.message_ts),
    direction: row.direction,
    raw: JSON.parse(row.raw) as Record<string, unknown>,
  };
}
