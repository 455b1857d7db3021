/**
 * Migration 7 (extensions.md §4, "No message carries another's content"): Discord raws stored before gw
 * projected them (community-chat/raw.ts) kept the whole gateway payload. Here, in SQL, what Discord puts of
 * other messages in a message: a reply's `referenced_message` becomes its ids (null stays null), each forward
 * snapshot the ids of the forward's reference, an interaction is dropped (a bot's message, never stored
 * but by an older gw), a mention becomes the user's id; and `content` takes the current text (edits made
 * before `raw` followed them). Tombstones already hold `{}`. Deeper message-like objects (the projection's
 * generic rule) are not something Discord sends, so no rule here reaches them.
 */

/** The ids of the message at `path` in `raw` (a message object's `id`, else its `message_id`), nulls left out. */
const idsAt = (path: string) => `json_patch('{}', json_object(
    'message_id', coalesce(json_extract(raw, '${path}.id'), json_extract(raw, '${path}.message_id')),
    'channel_id', json_extract(raw, '${path}.channel_id'),
    'guild_id', json_extract(raw, '${path}.guild_id')))`;

/** The JSON type at `path`, null for a raw that is not valid JSON (left as it is, never an error). */
const typeAt = (path: string) => `(CASE WHEN json_valid(raw) THEN json_type(raw, '${path}') END)`;

export const RAW_MIGRATION = `
  UPDATE messages SET raw = json_set(raw, '$.referenced_message', json(${idsAt("$.referenced_message")}))
  WHERE source = 'community_chat' AND ${typeAt("$.referenced_message")} = 'object';

  UPDATE messages SET raw = json_set(raw, '$.message_snapshots', json(
      (SELECT json_group_array(json(r.ids)) FROM json_each(messages.raw, '$.message_snapshots'),
        (SELECT ${idsAt("$.message_reference")} AS ids) AS r)))
  WHERE source = 'community_chat' AND ${typeAt("$.message_snapshots")} = 'array';

  UPDATE messages SET raw = json_remove(raw, '$.interaction', '$.interaction_metadata')
  WHERE source = 'community_chat'
    AND (${typeAt("$.interaction")} IS NOT NULL OR ${typeAt("$.interaction_metadata")} IS NOT NULL);

  UPDATE messages SET raw = json_set(raw, '$.mentions', json(
      (SELECT json_group_array(json(json_patch('{}', json_object('id', json_extract(value, '$.id')))))
       FROM json_each(messages.raw, '$.mentions'))))
  WHERE source = 'community_chat' AND ${typeAt("$.mentions")} = 'array';

  UPDATE messages SET raw = json_set(raw, '$.content', text)
  WHERE source = 'community_chat' AND ${typeAt("$.content")} = 'text' AND json_extract(raw, '$.content') <> text;
`;
