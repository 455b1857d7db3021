/**
 * Sending to Discord (runner). The text goes out as the consecutive posts `messageBodies` builds (one
 * outbound record whatever their number; its platform id is the first post's), each with a nonce so a
 * REST retry cannot double-post. A failure maps through `sendFailure`; when a later part fails, the
 * details say how many parts went out and their ids. A rejected token also turns the connector to
 * `error`, since every later call would fail the same way.
 */
import { AppError } from "../../core/errors.ts";
import type { Logger } from "../../core/ports.ts";
import type { SendRequest, SendResult } from "../connector.ts";
import type { DiscordLink } from "./discord-link.ts";
import { messageBodies } from "./outgoing.ts";
import { isTokenRejection, sendFailure } from "./platform-errors.ts";

export interface SenderDeps {
  link: () => DiscordLink | null;
  onTokenRejected: () => void;
  log: Logger;
}

/** The open link, or PLATFORM_SEND_FAILED `not_connected` (nothing was sent). */
export function connectedLink(deps: SenderDeps): DiscordLink {
  const link = deps.link();
  if (!link)
    throw new AppError("PLATFORM_SEND_FAILED", "The Discord connector is not connected yet; retry shortly.", {
      reason: "not_connected",
    });
  return link;
}

export function createSender(deps: SenderDeps) {
  return async (req: SendRequest): Promise<SendResult> => {
    const link = connectedLink(deps);
    const replyTo = req.replyTo?.platformId ?? null;
    if (req.replyTo && !replyTo)
      deps.log.warn({ reply_to: req.replyTo.id }, "reply_to has no Discord id; sent without a reference");
    const bodies = messageBodies(req.id, req.text, replyTo);
    const ids: string[] = [];
    for (const body of bodies) {
      try {
        ids.push((await link.post(req.channel.platformRef, body)).id);
      } catch (err) {
        if (isTokenRejection(err)) deps.onTokenRejected();
        const failure = sendFailure(err);
        if (ids.length === 0) throw failure;
        throw new AppError(
          failure.code,
          `${failure.message} Part ${ids.length + 1} of ${bodies.length} failed; the earlier parts were sent.`,
          { ...failure.details, sent_parts: ids.length, total_parts: bodies.length, platform_ids: ids },
          { cause: err },
        );
      }
    }
    const bot = link.botUser();
    return {
      platformId: ids[0] ?? null,
      sender: { id: bot?.id ?? "", displayName: bot?.name ?? "" },
      raw: { channel_id: req.channel.platformRef, message_ids: ids, parts: ids.length },
    };
  };
}
