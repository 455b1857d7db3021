/**
 * Maps stored rows to the Envelope (pure). Attachment URLs are adapter-hosted:
 * `<attachment base URL>/attachments/<id>`; attachments whose bytes are gone are still listed.
 * `envelopeJson` writes the same Envelope as JSON text directly, splicing the stored `raw` JSON in as
 * it is (it was serialised once, at ingest), so reads never parse and re-serialise it.
 */
import type { Envelope } from "../core/envelope.ts";
import { formatTimestamp } from "../core/time.ts";
import type { AttachmentRow } from "./attachments.ts";
import type { MessageRow } from "./messages.ts";

type EnvelopeWithoutRaw = Omit<Envelope, "raw">;

function head(row: MessageRow, attachments: readonly AttachmentRow[], baseUrl: string): EnvelopeWithoutRaw {
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
  };
}

export function toEnvelope(
  row: MessageRow,
  attachments: readonly AttachmentRow[],
  baseUrl: string,
): Envelope {
  return { ...head(row, attachments, baseUrl), raw: JSON.parse(row.raw) as Record<string, unknown> };
}

/** The Envelope as JSON text, byte for byte `JSON.stringify(toEnvelope(...))`. */
export function envelopeJson(
  row: MessageRow,
  attachments: readonly AttachmentRow[],
  baseUrl: string,
): string {
  const json = JSON.stringify(head(row, attachments, baseUrl));
  return `${json.slice(0, -1)},"raw":${row.raw}}`;
}
