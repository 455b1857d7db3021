/**
 * Outbound records: every message sent through gw is stored as one `outbound` row (never pushed, never
 * unread, visible in context), whatever the platform needed to carry it. With the platform id linked, the
 * connector's later sight of the same message dedupes onto this row; when the connector stored the echo
 * first, that row is the record. Whichever side stored first, the record keeps the agent's `reply_to`.
 */
import type { ChannelType, Source } from "../core/envelope.ts";
import type { Store } from "../store/store.ts";

export interface OutboundRecord {
  /** The id allocated for this send before the platform was called. */
  id: string;
  source: Source;
  channel: { id: string; type: ChannelType };
  sender: { id: string; displayName: string };
  text: string;
  replyTo: string | null;
  platformId: string | null;
  raw: Record<string, unknown>;
  /** When the platform accepted it. */
  sentAtMs: number;
}

export function createOutboundRecorder(deps: { store: Store }) {
  return (r: OutboundRecord): { id: string; sentAtMs: number } => {
    // The connector already saw (and stored) the platform's echo of this send: that row is the record.
    const seen = r.platformId ? deps.store.messages.idByPlatformId(r.source, r.platformId) : null;
    const echo = seen ? deps.store.messages.get(seen) : null;
    if (echo) {
      // An echo carries no thread (iMessage's has none): the record keeps what the agent asked for.
      if (r.replyTo !== null && echo.reply_to === null) deps.store.messages.setReplyTo(echo.id, r.replyTo);
      return { id: echo.id, sentAtMs: echo.message_ts };
    }
    const now = r.sentAtMs;
    deps.store.messages.insert({
      id: r.id,
      source: r.source,
      platform_id: r.platformId,
      channel_id: r.channel.id,
      channel_type: r.channel.type,
      sender_id: r.sender.id,
      sender_name: r.sender.displayName,
      person_id: null,
      text: r.text,
      reply_to: r.replyTo,
      message_ts: now,
      direction: "outbound",
      allowlist_status: "outbound",
      raw: JSON.stringify(r.raw),
      created_at: now,
    });
    return { id: r.id, sentAtMs: now };
  };
}
