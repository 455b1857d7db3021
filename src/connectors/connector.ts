/**
 * What every platform connector offers the service. A connector reads its platform and hands
 * normalised messages to the ingest pipeline; `send` delivers one outbound message and either returns
 * the platform's id for it or throws AppError PLATFORM_AUTH / PLATFORM_SEND_FAILED. Platform SDKs are
 * imported only inside their own connector folder.
 */
import type { Source } from "../core/envelope.ts";
import type { ConnectorHealth } from "../http/health.ts";
import type { Ingest } from "../ingest/ingest.ts";
import type { ChannelRow } from "../store/channels.ts";

export interface OutgoingAttachment {
  /** A readable regular file (a stored attachment or a checked local path). */
  path: string;
  mime: string | null;
}

export interface SendRequest {
  channel: ChannelRow;
  text: string;
  /** The message replied to, with the platform's id for it when known. */
  replyTo: { id: string; platformId: string | null } | null;
  attachment: OutgoingAttachment | null;
}

export interface SendResult {
  /** The platform's id of the sent message, when the platform reports one at once. */
  platformId: string | null;
  /** Who sent it, as the platform names the gateway's own account. */
  sender: { id: string; displayName: string };
  raw: Record<string, unknown>;
}

export interface Connector {
  readonly source: Source;
  start(ingest: Ingest): Promise<void>;
  stop(): Promise<void>;
  send(req: SendRequest): Promise<SendResult>;
  health(): ConnectorHealth;
}

export type ConnectorRegistry = Partial<Record<Source, Connector>>;

export function sourceOfChannel(channelId: string): Source {
  return channelId.startsWith("community_chat:") ? "community_chat" : "device_messenger";
}
