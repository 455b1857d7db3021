/**
 * Phone commands (GW_RECEIVER_COMMANDS, extensions §7), pure: which messages are commands, and the
 * answers gw posts back. A command is a message whose whole text, trimmed and in any case, is `/stop`,
 * `/status` or `/new`, without attachments, from an allowlisted person (person_id set) in a one-to-one
 * chat, over Discord or iMessage itself (never SMS or RCS: their sender ids prove nothing, §4). Anything
 * else, from a group or over SMS included, is an ordinary message and runs.
 */
import { authenticated } from "../allowlist/services.ts";
import type { Envelope } from "../core/envelope.ts";

export const COMMANDS = ["stop", "status", "new"] as const;
export type Command = (typeof COMMANDS)[number];

/** The command a message is, or null for an ordinary message. */
export function commandOf(m: Envelope): Command | null {
  if (m.direction !== "inbound" || m.channel_type !== "dm" || !m.sender.person_id) return null;
  if (m.attachments.length > 0 || !authenticated(m)) return null;
  const word = m.text.trim().toLowerCase();
  return COMMANDS.find((c) => `/${c}` === word) ?? null;
}

/** A span of time as a phone shows it: `8 s`, `3 min 5 s`, `2 h 4 min`. */
export function formatSpan(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

const messages = (n: number) => `${n} message${n === 1 ? "" : "s"}`;

/** What runs in a channel, as /status and /stop see it. */
export interface ChannelState {
  running: { startedAt: number; messages: number } | null;
  /** Jobs waiting behind it (or for their batch window). */
  waiting: number;
  /** A /new waits for the next run. */
  fresh: boolean;
}

export function statusAnswer(s: ChannelState, now: number): string {
  const running = s.running
    ? `a run of ${messages(s.running.messages)} is going since ${formatSpan(now - s.running.startedAt)} ago`
    : "nothing is running";
  const waiting =
    s.waiting === 0 ? "nothing waits" : `${messages(s.waiting)} wait${s.waiting === 1 ? "s" : ""}`;
  return `gw: ${running}; ${waiting}${s.fresh ? "; the next run starts a new conversation" : ""}.`;
}

export function stopAnswer(s: ChannelState, now: number): string {
  const stopped = s.running
    ? `stopped the run of ${messages(s.running.messages)} that had been going for ${formatSpan(now - s.running.startedAt)}`
    : "nothing was running";
  const dropped = s.waiting === 0 ? "nothing was waiting" : `dropped ${messages(s.waiting)} waiting`;
  return `gw: ${stopped}; ${dropped}.`;
}

export const NEW_ANSWER = "gw: the next run starts a new conversation.";

/** The Idempotency-Key of a command's answer: one per delivery, so a redelivery never answers twice. */
export const answerKey = (deliveryId: string): string => `gw-receiver-command:${deliveryId}`;
