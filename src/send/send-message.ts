/**
 * POST /messages/send as a service function (spec E). Every check comes before the channel's rate-limit
 * token, so a refused request never spends one. The connector sends under a message id allocated first
 * (platforms use it as their nonce); the one outbound record is written by a separate step, so the caller can
 * retry it without sending again (send/idempotency.ts). A local file is sent from its checked open
 * descriptor, never by path again, and closed when the send ends either way.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type ConnectorRegistry, type OutgoingAttachment, sourceOfChannel } from "../connectors/connector.ts";
import { AppError } from "../core/errors.ts";
import type { Logger } from "../core/ports.ts";
import { formatTimestamp } from "../core/time.ts";
import type { OutboundRecord } from "../ingest/outbound.ts";
import type { Store } from "../store/store.ts";
import {
  type AttachmentRef,
  checkLocalPath,
  type PathPolicy,
  parseAttachmentItem,
} from "./attachment-rules.ts";
import type { RateLimiter } from "./rate-limit.ts";

export interface SendMessageInput {
  channel_id: string;
  text: string;
  reply_to?: string | null;
  attachments?: { url?: string; path?: string; mime?: string }[];
}

export interface SendMessageOutput {
  message_id: string;
  sent_at: string;
}

export interface SendDeps {
  store: Store;
  connectors: ConnectorRegistry;
  limiter: RateLimiter;
  recordOutbound: (r: OutboundRecord) => { id: string; sentAtMs: number };
  newMessageId: () => string;
  now: () => number;
  attachmentDir: string;
  pathPolicy: PathPolicy;
  log: Logger;
}

/** The channel a send goes to: observed inbound before, and able to carry what was asked (refusals). */
function sendChannel(store: Store, input: SendMessageInput, attachments: number) {
  const channel = store.channels.get(input.channel_id);
  const source = sourceOfChannel(input.channel_id);
  if (!channel || channel.source !== source) {
    throw new AppError("CHANNEL_NOT_FOUND", "No inbound message was ever seen in this channel.", {
      field: "channel_id",
      channel_id: input.channel_id,
    });
  }
  if (source === "community_chat" && attachments > 0) {
    throw new AppError(
      "ATTACHMENT_TOO_LARGE_FOR_PLATFORM",
      "Attachments to community-chat channels are not supported (upload limit 25 MB; passthrough is not implemented).",
      { field: "attachments", limit_bytes: 25 * 1024 * 1024 },
    );
  }
  if (source === "community_chat" && input.text.trim() === "") {
    throw new AppError(
      "VALIDATION_FAILED",
      "text is empty: Discord cannot post an empty message (and attachments are not accepted there).",
      { field: "text", rule: "non_blank_for_community_chat" },
      { status: 400 },
    );
  }
  return { channel, source };
}

/** The message replied to: a stored message of the same channel (404 otherwise), or none. */
function replyTarget(
  store: Store,
  replyTo: string | null | undefined,
  channelId: string,
): { id: string; platformId: string | null } | null {
  if (!replyTo) return null;
  const target = store.messages.get(replyTo);
  if (!target || target.channel_id !== channelId) {
    throw new AppError("MESSAGE_NOT_FOUND", "reply_to is not a message of this channel.", {
      field: "reply_to",
      message_id: replyTo,
    });
  }
  return { id: target.id, platformId: target.platform_id };
}

export function createSendMessage(deps: SendDeps) {
  const { store, log } = deps;

  /** The attachment for the connector; a local file is held open (`checked`) until `close`. */
  const resolveAttachment = (
    ref: AttachmentRef,
    mimeHint: string | undefined,
  ): { attachment: OutgoingAttachment; close: () => void } => {
    if (ref.kind === "path") {
      const checked = checkLocalPath(ref.path, "attachments.0.path", deps.pathPolicy);
      log.info({ path: checked.path, size: checked.size }, "sending a local file");
      return {
        attachment: {
          path: checked.path,
          mime: mimeHint ?? null,
          checked: { fd: checked.fd, size: checked.size },
        },
        close: checked.close,
      };
    }
    const row = store.attachments.get(ref.attachmentId);
    const file = row?.file_name ? join(deps.attachmentDir, row.file_name) : null;
    if (!row || !file || !existsSync(file)) {
      throw new AppError("MESSAGE_NOT_FOUND", "The attachment does not exist or its bytes were deleted.", {
        field: "attachments.0.url",
        attachment_id: ref.attachmentId,
      });
    }
    return { attachment: { path: file, mime: mimeHint ?? row.mime }, close: () => {} };
  };

  /**
   * Sends; resolves once the platform accepted, with the step that records it (see send/idempotency.ts).
   * Refusals, in order: attachment shapes (400), a channel never observed inbound (404 CHANNEL_NOT_FOUND),
   * community-chat attachments (413) or blank text (400: Discord cannot post it), a `reply_to` not stored
   * in the channel (404), a first device-messenger attachment that does not resolve (stored bytes: 404
   * MESSAGE_NOT_FOUND; local path: 400 by the path rules), then no token (429).
   */
  return async (input: SendMessageInput): Promise<() => SendMessageOutput> => {
    const items = input.attachments ?? [];
    const refs = items.map((item, i) => parseAttachmentItem(item, i));

    const { channel, source } = sendChannel(store, input, refs.length);
    const replyTo = replyTarget(store, input.reply_to, channel.id);

    const first = refs[0];
    const resolved = first ? resolveAttachment(first, items[0]?.mime) : null;
    const attachment = resolved?.attachment ?? null;
    try {
      if (refs.length > 1)
        log.warn({ channel_id: channel.id, dropped: refs.length - 1 }, "only the first attachment is sent");

      const token = deps.limiter.take(channel.id);
      if (!token.allowed) {
        throw new AppError("RATE_LIMITED", "Too many sends to this channel; retry later.", {
          channel_id: channel.id,
          retry_after_s: token.retryAfterS,
        });
      }

      const connector = deps.connectors[source];
      if (!connector) {
        throw new AppError("PLATFORM_SEND_FAILED", `The ${source} connector is not running.`, { source });
      }
      const id = deps.newMessageId();
      const to = { id: channel.id, type: channel.channel_type, platformRef: channel.platform_ref };
      const result = await connector.send({ id, channel: to, text: input.text, replyTo, attachment });
      const sentAtMs = deps.now();
      return () => {
        const record = deps.recordOutbound({
          id,
          source,
          channel: { id: channel.id, type: channel.channel_type },
          sender: result.sender,
          text: input.text,
          replyTo: replyTo?.id ?? null,
          platformId: result.platformId,
          raw: result.raw,
          sentAtMs,
        });
        return { message_id: record.id, sent_at: formatTimestamp(record.sentAtMs) };
      };
    } finally {
      resolved?.close();
    }
  };
}

export type SendMessage = ReturnType<typeof createSendMessage>;
