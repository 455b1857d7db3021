/**
 * Events in the Claude Code channel (extensions.md §1): each visible event stored after the channel
 * started is pushed once as a `notifications/claude/channel` notification, one readable line (`Ann edited:
 * "…"`, `Ann reacted 👍 to "…"`, `Ann unsent a message`) with meta {event, event_id, message_id, channel_id,
 * platform}. It rides the GET /events long poll from an in-memory cursor (followEventPages, which gw mcp's
 * attachment purge rides too); a reaction's line quotes its target; a page with a `message.deleted` then
 * calls `onDeleted` (the attachment copies are checked: there is one events follower per process).
 */
import { encodeTime } from "ulid";
import type { GwEvent } from "../core/event.ts";
import {
  CHANNEL_METHOD,
  type ChannelDeps,
  type ChannelNotification,
  channelAgentId,
  PAGE,
  retrier,
  runRounds,
  WAIT_S,
} from "./channel.ts";

/** The smallest event id stored at or after `ms`: events are `evt_` + ULID, ascending in time. */
export function eventCursorAt(ms: number): string {
  return `evt_${encodeTime(ms, 10)}0000000000000000`;
}

const QUOTE_CHARS = 80;
const quote = (text: string) =>
  `"${text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS - 1)}…` : text}"`;

/** The notification for one event; `target` is the reacted message's text when known. Pure. */
export function eventNotification(e: GwEvent, target: string | null): ChannelNotification {
  const who = e.sender.display_name;
  const emoji = String(e.data.emoji ?? "");
  const about = target === null || target === "" ? "a message" : quote(target);
  const content =
    e.kind === "message.edited"
      ? `${who} edited: ${quote(String(e.data.text ?? ""))}`
      : e.kind === "message.deleted"
        ? `${who} unsent a message`
        : e.kind === "reaction.added"
          ? `${who} reacted ${emoji} to ${about}`
          : `${who} removed ${emoji} from ${about}`;
  return {
    method: CHANNEL_METHOD,
    params: {
      content,
      meta: {
        event: e.kind,
        event_id: e.id,
        message_id: e.message_id,
        channel_id: e.channel_id,
        platform: e.source,
      },
    },
  };
}

export type EventFollowDeps = Pick<ChannelDeps, "api" | "now" | "sleep" | "random" | "log"> & {
  /** The X-Agent-ID to send (GET /events needs one; what it sees does not depend on it). */
  agentId: string;
};

/**
 * Follows GET /events from now (eventCursorAt) until `stop`, handing each non-empty page to `handle` in
 * order; the cursor moves past a page once `handle` is done. While gw serve is unreachable or refuses (503
 * SERVICE_BUSY) it waits as backoff.ts says.
 */
export function followEventPages(
  deps: EventFollowDeps,
  what: string,
  handle: (events: GwEvent[], signal: AbortSignal) => Promise<void>,
): { stop(): Promise<void>; done: Promise<void> } {
  const stopping = new AbortController();
  const retry = retrier(deps, stopping.signal, what);
  let since = eventCursorAt(deps.now());
  const round = async () => {
    const res = await deps.api.call("GET", "/events", {
      agentId: deps.agentId,
      query: { since, limit: PAGE, wait: WAIT_S },
      signal: stopping.signal,
    });
    if (stopping.signal.aborted) return;
    if (!res.ok) return retry.failed(res);
    retry.succeeded();
    const { events } = res.body as { events: GwEvent[] };
    if (events.length === 0) return;
    await handle(events, stopping.signal);
    since = (events.at(-1) as GwEvent).id;
  };
  return runRounds(round, stopping, deps.log, what);
}

/** Pushes each event (channel mode); a page with a `message.deleted` then awaits `onDeleted`. */
export function followEvents(deps: ChannelDeps & { onDeleted?: () => Promise<void> }): {
  stop(): Promise<void>;
  done: Promise<void>;
} {
  const agentId = channelAgentId(deps.agentId);
  const targetText = async (e: GwEvent, signal: AbortSignal): Promise<string | null> => {
    if (!e.kind.startsWith("reaction.")) return null;
    const res = await deps.api.call("GET", `/messages/${e.message_id}`, { agentId, signal });
    return res.ok ? String((res.body as { text?: unknown }).text ?? "") : null;
  };
  return followEventPages({ ...deps, agentId }, "channel events", async (events, signal) => {
    for (const e of events) await deps.notify(eventNotification(e, await targetText(e, signal)));
    if (events.some((e) => e.kind === "message.deleted")) await deps.onDeleted?.();
  });
}
