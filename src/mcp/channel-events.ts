/**
 * Events in the Claude Code channel (extensions.md §1): each visible event stored after the channel
 * started is pushed once as a `notifications/claude/channel` notification, one readable line (`Ann edited:
 * "…"`, `Ann reacted 👍 to "…"`, `Ann unsent a message`) with meta {event, event_id, message_id, channel_id,
 * platform}. It rides the GET /events long poll from an in-memory cursor; a reaction's line quotes its target.
 */
import { encodeTime } from "ulid";
import type { GwEvent } from "../core/event.ts";
import type { ApiResponse } from "./api-client.ts";
import {
  BACKOFF_MS,
  CHANNEL_METHOD,
  type ChannelDeps,
  type ChannelNotification,
  channelAgentId,
  PAGE,
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

/** Follows GET /events until `stop`; while gw serve is unreachable it retries with BACKOFF_MS. */
export function followEvents(deps: ChannelDeps): { stop(): Promise<void>; done: Promise<void> } {
  const { api, log } = deps;
  const agentId = channelAgentId(deps.agentId);
  const stopping = new AbortController();
  let since = eventCursorAt(deps.now());
  let failures = 0;

  const backoff = async (why: ApiResponse) => {
    if (failures === 0) log.warn({ status: why.status }, "channel events: gw serve did not answer; retrying");
    await deps.sleep(BACKOFF_MS[Math.min(failures, BACKOFF_MS.length - 1)] as number, stopping.signal);
    failures += 1;
  };
  const targetText = async (e: GwEvent): Promise<string | null> => {
    if (!e.kind.startsWith("reaction.")) return null;
    const res = await api.call("GET", `/messages/${e.message_id}`, { agentId, signal: stopping.signal });
    return res.ok ? String((res.body as { text?: unknown }).text ?? "") : null;
  };
  const round = async () => {
    const res = await api.call("GET", "/events", {
      agentId,
      query: { since, limit: PAGE, wait: WAIT_S },
      signal: stopping.signal,
    });
    if (stopping.signal.aborted) return;
    if (!res.ok) return backoff(res);
    failures = 0;
    for (const e of (res.body as { events: GwEvent[] }).events) {
      await deps.notify(eventNotification(e, await targetText(e)));
      since = e.id;
    }
  };
  return runRounds(round, stopping, log, "channel events");
}
