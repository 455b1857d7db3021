/**
 * The Event (extensions.md §1): a change to a stored message — edited, deleted, a reaction added or
 * removed — as agents see it over GET /events, event webhooks and channel notifications. The TypeBox
 * schema is the type; `data` depends on the kind.
 */
import { type Static, Type } from "@sinclair/typebox";
import { SenderSchema, SourceSchema } from "./envelope.ts";
import { EVENT_ID_PATTERN, MESSAGE_ID_PATTERN } from "./ids.ts";

export const EVENT_KINDS = [
  "message.edited",
  "message.deleted",
  "reaction.added",
  "reaction.removed",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export const EventSchema = Type.Object({
  id: Type.String({
    pattern: EVENT_ID_PATTERN,
    description: "evt_ + ULID, ascending in the order gw stored them.",
  }),
  kind: Type.Union([
    Type.Literal(EVENT_KINDS[0]),
    Type.Literal(EVENT_KINDS[1]),
    Type.Literal(EVENT_KINDS[2]),
    Type.Literal(EVENT_KINDS[3]),
  ]),
  source: SourceSchema,
  channel_id: Type.String(),
  message_id: Type.String({ pattern: MESSAGE_ID_PATTERN, description: "The message the event changes." }),
  sender: SenderSchema,
  timestamp: Type.String({
    description: "RFC 3339 UTC ms: when it happened on the platform, else when gw saw it.",
  }),
  data: Type.Record(Type.String(), Type.Unknown(), {
    description:
      "message.edited: {text, previous_text}; message.deleted: {}; reaction.*: {emoji} (Unicode, or Discord's <:name:id>).",
  }),
});

export type GwEvent = Static<typeof EventSchema>;
