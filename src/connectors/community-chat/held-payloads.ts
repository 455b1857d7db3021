/**
 * The bound on live Discord payloads held in memory while they wait in their channel's queue
 * (GW_COMMUNITY_QUEUE_MAX; extensions.md §4): a store that cannot write must not let a busy guild fill the
 * process. A message past the bound is dropped before its downloads start; its channel gets one catch-up
 * task, queued behind what the channel already holds, that fetches from just before the first message
 * dropped there (catch-up's rules: bounded by GW_COMMUNITY_CATCHUP_*, nothing stored twice). A reaction
 * past the bound is dropped (logged and counted: it carries no content). Edits and deletes are always
 * held, and counted: a lost unsend would leave text an agent may read.
 */
import type { Logger } from "../../core/ports.ts";
import type { CatchUpTask } from "./catch-up-plan.ts";
import type { ChannelKind } from "./mapping.ts";

/** Where a channel's refill starts: just before the first message dropped since its task was queued. */
interface Gap {
  kind: ChannelKind;
  discordChannelId: string;
  firstDropped: bigint;
}

export interface HeldPayloadsDeps {
  max: number;
  log: Logger;
  /** Queues a catch-up whose task is made when its turn comes; false when catch-up is off. */
  runWhenDue: (channelId: string, how: string, make: () => CatchUpTask | null) => boolean;
}

export function createHeldPayloads(d: HeldPayloadsDeps) {
  let held = 0;
  const dropped = { messages: 0, reactions: 0 };
  const gaps = new Map<string, Gap>();
  /** Logged once per overflow (when the first payload is dropped after the queue had room). */
  let overflowing = false;

  const take = (): boolean => {
    if (held >= d.max) {
      if (!overflowing)
        d.log.warn(
          { held, max: d.max },
          "Discord messages cannot be stored fast enough (GW_COMMUNITY_QUEUE_MAX reached): new ones are dropped and fetched again from Discord's history later",
        );
      overflowing = true;
      return false;
    }
    held += 1;
    return true;
  };

  /** The refill task of a channel, taken when its turn comes: later drops queue a new one. */
  const refill = (channelId: string): CatchUpTask | null => {
    const gap = gaps.get(channelId);
    gaps.delete(channelId);
    if (!gap) return null;
    return {
      channelId,
      kind: gap.kind,
      discordChannelId: gap.discordChannelId,
      position: (gap.firstDropped - 1n).toString(),
    };
  };

  return {
    /** A live message may be held (counted until `release`); false: it was dropped and will be refetched. */
    takeMessage(channelId: string, kind: ChannelKind, discordChannelId: string, messageId: string): boolean {
      if (take()) return true;
      dropped.messages += 1;
      const gap = gaps.get(channelId);
      const id = BigInt(messageId);
      if (gap) {
        if (id < gap.firstDropped) gap.firstDropped = id;
        return false;
      }
      gaps.set(channelId, { kind, discordChannelId, firstDropped: id });
      if (!d.runWhenDue(channelId, "refill", () => refill(channelId))) {
        gaps.delete(channelId);
        d.log.error(
          { channel_id: channelId, message_id: messageId },
          "a Discord message was dropped past GW_COMMUNITY_QUEUE_MAX and catch-up is off (GW_COMMUNITY_CATCHUP_MAX_MESSAGES=0): it is not fetched again",
        );
      }
      return false;
    },
    /** A reaction may be held; false: dropped. */
    takeReaction(): boolean {
      if (take()) return true;
      dropped.reactions += 1;
      return false;
    },
    /** An edit or a delete: always held, counted. */
    hold(): void {
      held += 1;
    },
    release(): void {
      held -= 1;
      if (held < d.max && overflowing) {
        overflowing = false;
        d.log.info(
          { dropped: { ...dropped } },
          "Discord queue has room again; dropped messages are fetched from history",
        );
      }
    },
    held: () => held,
    /** Payloads dropped past the bound since start. */
    dropped: () => ({ ...dropped }),
  };
}

export type HeldPayloads = ReturnType<typeof createHeldPayloads>;
