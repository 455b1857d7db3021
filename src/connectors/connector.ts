/**
 * What every platform connector offers the service. A connector reads its platform and hands normalised
 * messages to the ingest pipeline; `start` returns once reading has begun and never waits on the platform's
 * network (the service listens meanwhile). Platform SDKs are imported only inside their own connector folder.
 */
import { type Static, Type } from "@sinclair/typebox";
import type { ChannelType, Source } from "../core/envelope.ts";
import type { Ingest } from "../ingest/ingest.ts";

/**
 * `ok` healthy; `disabled` not configured; `starting` not connected yet; `degraded` retrying on its
 * own; `error` cannot work until a person acts (the detail says what to do).
 */
export const CONNECTOR_STATES = ["ok", "disabled", "starting", "degraded", "error"] as const;
export type ConnectorState = (typeof CONNECTOR_STATES)[number];

export const ConnectorHealthSchema = Type.Object({
  state: Type.Unsafe<ConnectorState>(Type.String({ enum: [...CONNECTOR_STATES] })),
  detail: Type.String(),
});
export type ConnectorHealth = Static<typeof ConnectorHealthSchema>;

export interface OutgoingAttachment {
  /** A readable regular file (a stored attachment or a checked local path). */
  path: string;
  mime: string | null;
  /**
   * A local path that passed the path rules, held open: read its bytes from `fd` (at most `size`),
   * never by `path`, which may point elsewhere by now. The service closes it after the send.
   */
  checked?: { fd: number; size: number };
}

/** The channel a send goes to: gw's id for it, its kind, and the platform's own reference. */
export interface ChannelRef {
  id: string;
  type: ChannelType;
  /** The chat GUID (iMessage) or the channel's snowflake (Discord). */
  platformRef: string;
}

export interface SendRequest {
  /** gw's id for this send (its outbound record's id); platforms that take a nonce derive it from this. */
  id: string;
  channel: ChannelRef;
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

/** A reaction of gw's own account on a message (extensions.md §2). */
export interface ReactRequest {
  channel: ChannelRef;
  /** The platform's id of the message reacted to. */
  platformMessageId: string;
  /** Unicode, or Discord's `<:name:id>` / `<a:name:id>`. */
  emoji: string;
  remove: boolean;
}

/** An edit of a message gw itself sent (extensions.md §2). */
export interface EditRequest {
  channel: ChannelRef;
  platformMessageId: string;
  text: string;
}

export interface EditResult {
  editedAtMs: number;
  /** The key of the change the platform's echo of this edit maps to: the action's record shares it. */
  changeKey: string;
}

export interface Connector {
  readonly source: Source;
  start(ingest: Ingest): Promise<void>;
  stop(): Promise<void>;
  /** Delivers one outbound message, or throws AppError PLATFORM_AUTH / PLATFORM_SEND_FAILED. */
  send(req: SendRequest): Promise<SendResult>;
  /** One of CONNECTOR_STATES with a one-sentence detail (decisions.md). */
  health(): ConnectorHealth;
  /** The npm packages it drives (a name, or a scope ending in `/`): a fault raised in one restarts it. */
  readonly libraries?: readonly string[];
  /**
   * Drops the platform link and opens a new one; health is `degraded` with `reason` until it is up. The
   * process-level policy calls it when one of its `libraries` raises an unhandled error.
   */
  restart?(reason: string): void;
  /** Adds or removes gw's own reaction; absent where the platform cannot (→ 422 PLATFORM_UNSUPPORTED). */
  react?(req: ReactRequest): Promise<{ reactor: { id: string; displayName: string } }>;
  /** Edits a message gw sent; absent where the platform cannot (→ 422 PLATFORM_UNSUPPORTED). */
  edit?(req: EditRequest): Promise<EditResult>;
}

export type ConnectorRegistry = Partial<Record<Source, Connector>>;

/** Inbound attachment files a connector downloads or copies at once (the rest wait their turn). */
export const INBOUND_FILES_AT_ONCE = 4;

export function sourceOfChannel(channelId: string): Source {
  return channelId.startsWith("community_chat:") ? "community_chat" : "device_messenger";
}
