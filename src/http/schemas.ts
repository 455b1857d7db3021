/**
 * Request and response schemas of the HTTP API (spec "Request and response bodies"). They validate
 * requests, generate the OpenAPI document and give the handlers their types. Numeric query fields
 * carry `error: () => "<field>"` so a coercion failure still names its field.
 */

import { t } from "elysia";
import { EnvelopeSchema, SourceSchema } from "../core/envelope.ts";
import { ERROR_STATUS } from "../core/errors.ts";
import { EventSchema } from "../core/event.ts";
import { MESSAGE_ID_PATTERN } from "../core/ids.ts";

export const TEXT_MAX_CHARS = 20_000;

export const ErrorEnvelopeSchema = t.Object(
  {
    error: t.Object({
      code: t.String({ enum: Object.keys(ERROR_STATUS), description: "Stable error code." }),
      message: t.String(),
      details: t.Record(t.String(), t.Unknown(), {
        description: "Context fields, e.g. `field` and `reason`.",
      }),
    }),
  },
  { description: "Every non-2xx response." },
);

/** The longest unread long poll (decisions.md). */
export const LONG_POLL_MAX_SECONDS = 60;

export const ListQuery = {
  since: t.Optional(t.String({ description: "RFC 3339; only messages with message_ts greater than this." })),
  limit: t.Optional(
    t.Integer({
      minimum: 1,
      default: 20,
      description: "1 or more; above 100 is clamped to 100.",
      error: () => "limit",
    }),
  ),
};

/** The long poll's `wait` (0 to 60 seconds; 0 answers at once). */
const waitParam = (description: string) =>
  t.Optional(
    t.Integer({ minimum: 0, maximum: LONG_POLL_MAX_SECONDS, default: 0, description, error: () => "wait" }),
  );

export const UnreadQuery = t.Object({
  source: t.Optional(SourceSchema),
  channel_id: t.Optional(t.String({ description: "One channel." })),
  ...ListQuery,
  wait: waitParam(
    "Long poll, 0 to 60 seconds (beyond the spec, additive). When nothing matches, hold the answer until a " +
      "matching allowlisted message is stored or the wait ends (then the empty page). 0: answer at once. " +
      "Too many held polls: 503 SERVICE_BUSY with Retry-After.",
  ),
});

export const QuarantineQuery = t.Object({
  ...ListQuery,
  before: t.Optional(
    t.String({
      pattern: MESSAGE_ID_PATTERN,
      description:
        "Beyond the spec, additive: only messages older than this quarantined message (the last one of the " +
        "previous page), to read the whole quarantine page by page, newest to oldest.",
      error: () => "before",
    }),
  ),
});

export const EventsQuery = t.Object({
  since: t.Optional(
    t.String({
      pattern: "^(evt_[0-9A-HJKMNP-TV-Z]{26})?$",
      description: "An event id: only events after it (absent or empty: from the first).",
      error: () => "since",
    }),
  ),
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: 100, default: 20, description: "1 to 100.", error: () => "limit" }),
  ),
  wait: waitParam(
    "Long poll, 0 to 60 seconds: hold an empty answer until an event is stored or the wait ends. Too many " +
      "held polls: 503 SERVICE_BUSY with Retry-After.",
  ),
});

/** The longest search query (characters) and the largest page. */
export const SEARCH_Q_MAX = 200;
export const SEARCH_LIMIT_MAX = 100;

export const SearchQuery = t.Object({
  q: t.String({
    minLength: 1,
    maxLength: SEARCH_Q_MAX,
    description:
      "Words, 1 to 200 characters; never query syntax (quotes, `*`, `-`, `OR`... are plain text). A message " +
      "matches when it holds every word as a whole word, ignoring case and accents.",
    error: () => "q",
  }),
  source: t.Optional(SourceSchema),
  channel_id: t.Optional(t.String({ description: "One channel." })),
  limit: t.Optional(
    t.Integer({
      minimum: 1,
      maximum: SEARCH_LIMIT_MAX,
      default: 20,
      description: "1 to 100.",
      error: () => "limit",
    }),
  ),
});

export const SearchResponse = t.Object({ messages: t.Array(EnvelopeSchema) });

export const EventListResponse = t.Object({
  events: t.Array(EventSchema),
  next_since: t.String({ description: "The last id returned, else the `since` given (empty when absent)." }),
});

export const MessageListResponse = t.Object({
  messages: t.Array(EnvelopeSchema),
  next_since: t.String({ description: "Max timestamp returned, else the canonical `since`, else empty." }),
});

export const MessageIdParams = t.Object({
  message_id: t.String({ pattern: MESSAGE_ID_PATTERN }),
});

export const ContextQuery = t.Object({
  channel_id: t.String({ minLength: 1 }),
  around_message_id: t.String({ minLength: 1, pattern: MESSAGE_ID_PATTERN }),
  before: t.Optional(t.Integer({ minimum: 0, maximum: 50, default: 5, error: () => "before" })),
  after: t.Optional(t.Integer({ minimum: 0, maximum: 50, default: 5, error: () => "after" })),
});

export const ContextResponse = t.Object({ messages: t.Array(EnvelopeSchema) });

export const MarkReadRequest = t.Object({
  message_ids: t.Array(t.String(), { description: "May be empty; unknown ids are counted and skipped." }),
});

export const MarkReadResponse = t.Object({ marked_count: t.Integer({ minimum: 0 }) });

export const SendAttachment = t.Object({
  url: t.Optional(
    t.String({ description: "Adapter-hosted: /attachments/<id> or http(s)://<host>/attachments/<id>." }),
  ),
  path: t.Optional(t.String({ description: "Absolute path of a local file." })),
  mime: t.Optional(t.String({ description: "Optional MIME hint." })),
});

export const SendMessageRequest = t.Object({
  channel_id: t.String({ minLength: 1 }),
  text: t.String({ maxLength: TEXT_MAX_CHARS, description: "May be empty." }),
  reply_to: t.Optional(t.Union([t.String({ pattern: MESSAGE_ID_PATTERN }), t.Null()])),
  attachments: t.Optional(t.Array(SendAttachment, { description: "Exactly one of url or path per item." })),
});

export const SendHeaders = t.Object({
  "idempotency-key": t.Optional(
    t.String({
      minLength: 1,
      maxLength: 255,
      description: "Recommended. Replays return the first response.",
    }),
  ),
});

export const SendMessageResponse = t.Object({
  message_id: t.String({ pattern: MESSAGE_ID_PATTERN }),
  sent_at: t.String({ description: "RFC 3339 UTC." }),
});

export const AttachmentIdParams = t.Object({
  attachment_id: t.String({ pattern: "^att_[0-9A-HJKMNP-TV-Z]{26}$" }),
});

/** Discord's limit for one message, in UTF-16 units (an edit cannot split). */
export const EDIT_MAX_CHARS = 2000;

export const ReactRequest = t.Object({
  message_id: t.String({ pattern: MESSAGE_ID_PATTERN }),
  emoji: t.String({
    minLength: 1,
    maxLength: 64,
    description: "One Unicode emoji, or Discord's `<:name:id>` / `<a:name:id>`.",
  }),
  remove: t.Optional(t.Boolean({ description: "true removes gw's reaction (default false: adds it)." })),
});

export const ReactResponse = t.Object({
  message_id: t.String({ pattern: MESSAGE_ID_PATTERN }),
  emoji: t.String(),
  removed: t.Boolean(),
});

export const EditRequest = t.Object({
  message_id: t.String({ pattern: MESSAGE_ID_PATTERN }),
  text: t.String({ maxLength: EDIT_MAX_CHARS, description: "The new text, at most 2,000 characters." }),
});

export const EditResponse = t.Object({
  message_id: t.String({ pattern: MESSAGE_ID_PATTERN }),
  edited_at: t.String({ description: "RFC 3339 UTC: when the platform took the edit." }),
});

export const ChannelsQuery = t.Object({
  source: t.Optional(SourceSchema),
  q: t.Optional(
    t.String({
      minLength: 1,
      maxLength: 100,
      description:
        "Only channels whose name or one of whose people's ids contains this (case-insensitive), e.g. Mom.",
      error: () => "q",
    }),
  ),
  person_id: t.Optional(
    t.String({
      minLength: 1,
      description: "Beyond extensions.md: only the one-to-one channels where this allowlisted person wrote.",
    }),
  ),
  limit: t.Optional(
    t.Integer({ minimum: 1, maximum: 500, default: 100, description: "1 to 500.", error: () => "limit" }),
  ),
});

export const ChannelSummary = t.Object({
  channel_id: t.String(),
  source: SourceSchema,
  channel_type: t.Union([t.Literal("dm"), t.Literal("group")]),
  name: t.String({
    description: "Discord `guild #channel` or `@username`; iMessage the chat's name or its people.",
  }),
  last_message_at: t.String({ description: "RFC 3339 UTC: the newest visible message." }),
  unread_count: t.Integer({ minimum: 0, description: "This agent's unread messages in the channel." }),
});

export const ChannelListResponse = t.Object({ channels: t.Array(ChannelSummary) });

/** The error responses a route documents, by status. */
export function errorResponses(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, ErrorEnvelopeSchema]));
}
