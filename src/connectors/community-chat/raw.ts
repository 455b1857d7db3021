/**
 * The `raw` gw keeps of a Discord message (pure; extensions.md §4, "No message carries another's content").
 * A projection, never a copy: each message field Discord documents has its own rule below, and any other
 * field is kept only when its value cannot carry text (a number, boolean, null or snowflake). Another
 * message, wherever it is quoted, is reduced to its ids `{message_id, channel_id, guild_id}`: a reply's
 * `referenced_message` (null stays null: deleted), each forward snapshot (the forward's own reference
 * ids; a snapshot has none), and any message-like object nested in any field (in free-form fields, also
 * any value under a message key). Interactions keep ids, type and command name; a thread its ids and
 * type; no user object but this message's author: a mentioned user is their id (a reply that pings names
 * the quoted author there, and any display name is someone's free text).
 */
import { isSnowflake } from "./snowflake.ts";

type Json = Record<string, unknown>;
/** A field's rule: the value kept, or undefined to drop it. `m` is the whole message. */
type Rule = (v: unknown, m: Json) => unknown;

const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) =>
  v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";
/** Own properties only, whatever the keys (`__proto__` included), undefined values left out. */
const record = (entries: [string, unknown][]): Json =>
  Object.fromEntries(entries.filter(([, v]) => v !== undefined));

const scalar: Rule = (v) => (isScalar(v) ? v : undefined);
const num: Rule = (v) => (typeof v === "number" ? v : undefined);
const id: Rule = (v) => (isSnowflake(v) ? v : undefined);
/** An object's scalar fields, nested objects and arrays dropped; a message-like object is its ids. */
const flat: Rule = (v) => {
  if (!isRecord(v)) return undefined;
  return isMessageLike(v) ? idsOf(v) : record(Object.entries(v).filter(([, x]) => isScalar(x)));
};
/** A mentioned user: their id only (a message-like object: its ids). */
const mention: Rule = (v) => {
  if (!isRecord(v)) return undefined;
  return isMessageLike(v) ? idsOf(v) : record([["id", id(v.id, v)]]);
};
const list =
  (rule: Rule): Rule =>
  (v, m) =>
    Array.isArray(v) ? v.map((x) => rule(x, m)).filter((x) => x !== undefined) : undefined;
/** The named fields, each through its rule. */
const pick =
  (rules: Record<string, Rule>): Rule =>
  (v, m) =>
    isRecord(v) ? record(Object.entries(rules).map(([k, rule]) => [k, rule(v[k], m)])) : undefined;

/** Another message reduced to its ids (`message_id` from its `message_id` or `id`), only those present. */
export function idsOf(v: unknown): Json | undefined {
  if (!isRecord(v)) return undefined;
  return record([
    ["message_id", id(v.message_id, v) ?? id(v.id, v)],
    ["channel_id", id(v.channel_id, v)],
    ["guild_id", id(v.guild_id, v)],
  ]);
}

/** Keys whose value is another message (or a list or map of them) wherever they appear. */
const MESSAGE_KEYS = new Set(["message", "messages", "referenced_message", "message_snapshots"]);
/** Fields only a message has; `author` counts when it is a user (an embed's author is a name and url). */
const MESSAGE_FIELDS = [
  "content",
  "attachments",
  "embeds",
  "mentions",
  "message_snapshots",
  "message_reference",
  "referenced_message",
  "sticker_items",
  "interaction",
  "interaction_metadata",
];
const isUser = (v: unknown) =>
  isRecord(v) && (Object.hasOwn(v, "username") || Object.hasOwn(v, "global_name"));
const isMessageLike = (v: Json) =>
  MESSAGE_FIELDS.some((k) => Object.hasOwn(v, k)) || (Object.hasOwn(v, "author") && isUser(v.author));

/** Under a message key: null (a deleted message) stays null, a message or each of a list is its ids. */
const nested = (v: unknown): unknown =>
  v === null ? null : Array.isArray(v) ? v.map(nested).filter((x) => x !== undefined) : idsOf(v);

/**
 * This message's free-form content (embeds, components, poll, reactions), copied except for what is not
 * its own: a message-like object becomes its ids (a components v2 Text Display, `{type: 10, content}`,
 * too: a message's text is its `content`), a user object its id.
 */
function scrub(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(scrub);
  if (!isRecord(v)) return v;
  if (isMessageLike(v)) return idsOf(v);
  if (isUser(v)) return record([["id", id(v.id, v)]]);
  return record(Object.entries(v).map(([k, x]) => [k, MESSAGE_KEYS.has(k) ? nested(x) : scrub(x)]));
}

/** An interaction (`interaction`, `interaction_metadata` and the metadata that opened a modal): ids only. */
const interactionOf: Rule = (v, m) => {
  if (!isRecord(v)) return undefined;
  const user = isRecord(v.user) ? v.user : {};
  const target = isRecord(v.target_user) ? v.target_user : {};
  return record([
    ["id", id(v.id, m)],
    ["type", num(v.type, m)],
    ["name", typeof v.name === "string" ? v.name : undefined],
    ["user_id", id(user.id, m)],
    ["target_user_id", id(target.id, m)],
    ["target_message_id", id(v.target_message_id, m)],
    ["interacted_message_id", id(v.interacted_message_id, m)],
    ["original_response_message_id", id(v.original_response_message_id, m)],
    ["authorizing_integration_owners", flat(v.authorizing_integration_owners, m)],
    ["triggering_interaction_metadata", interactionOf(v.triggering_interaction_metadata, m)],
  ]);
};

/** `resolved`: the ids of what it resolves, per kind (users, members, roles, channels, messages...). */
const resolvedOf: Rule = (v) =>
  isRecord(v)
    ? record(
        Object.entries(v).map(([k, x]) => [k, isRecord(x) ? Object.keys(x).filter(isSnowflake) : undefined]),
      )
    : undefined;

const REFERENCE = { type: num, message_id: id, channel_id: id, guild_id: id };

/** The fields of a Discord message object and what `raw` keeps of each. */
const FIELDS = new Map<string, Rule>([
  ...[
    "id",
    "channel_id",
    "guild_id",
    "channel_type",
    "type",
    "content",
    "timestamp",
    "edited_timestamp",
    "tts",
    "mention_everyone",
    "pinned",
    "flags",
    "nonce",
    "webhook_id",
    "application_id",
    "position",
  ].map((k): [string, Rule] => [k, scalar]),
  ["author", flat],
  [
    "member",
    (v, m) =>
      isRecord(v) ? { ...(flat(v, m) as Json), ...record([["roles", list(id)(v.roles, m)]]) } : undefined,
  ],
  ["mentions", list(mention)],
  ["mention_roles", list(id)],
  ["mention_channels", list(flat)],
  ["attachments", list(flat)],
  ["sticker_items", list(flat)],
  ["stickers", list(flat)],
  ["activity", flat],
  ["application", flat],
  ["role_subscription_data", flat],
  ["embeds", scrub],
  ["components", scrub],
  ["poll", scrub],
  ["reactions", scrub],
  ["message_reference", pick(REFERENCE)],
  ["referenced_message", nested],
  // A snapshot carries no id of its own: each stands for the message the forward's reference names.
  [
    "message_snapshots",
    (v, m) => (Array.isArray(v) ? v.map(() => idsOf(m.message_reference) ?? {}) : undefined),
  ],
  ["interaction", interactionOf],
  ["interaction_metadata", interactionOf],
  ["thread", pick({ id, type: num, guild_id: id, parent_id: id, owner_id: id })],
  ["call", pick({ participants: list(id), ended_timestamp: scalar })],
  ["resolved", resolvedOf],
]);

/** A field Discord may add later: kept only when it cannot carry text (a number, boolean, null or id). */
const unknownField: Rule = (v) =>
  v === null || typeof v === "number" || typeof v === "boolean" || isSnowflake(v) ? v : undefined;

/** The `raw` of a Discord message payload (gateway or REST): this message's own fields, other messages' ids. */
export function rawOf(m: Json): Json {
  return record(Object.entries(m).map(([k, v]) => [k, (FIELDS.get(k) ?? unknownField)(v, m)]));
}
