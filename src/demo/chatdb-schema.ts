/**
 * A subset of macOS Messages' chat.db schema (Sequoia, macOS 15) for `gw demo` and tests: the 8 tables
 * gw reads or that its triggers touch, with Apple's exact names, types, defaults and constraints for the
 * columns kept, and the indexes and triggers readers can observe. A subset keeps the compiled binary
 * small and shows that gw probes columns instead of assuming them; tests also run on the full dump.
 */

/** Remote addresses. `UNIQUE(id, service)`: one person can have an iMessage row and an SMS row. */
const HANDLE = `
CREATE TABLE handle (
  ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
  id TEXT NOT NULL,
  country TEXT,
  service TEXT NOT NULL,
  uncanonicalized_id TEXT,
  person_centric_id TEXT,
  UNIQUE (id, service)
);`;

/** Conversations. `style` 43 = group, 45 = one-to-one. */
const CHAT = `
CREATE TABLE chat (
  ROWID INTEGER PRIMARY KEY AUTOINCREMENT,
  guid TEXT UNIQUE NOT NULL,
  style INTEGER,
  state INTEGER,
  account_id TEXT,
  properties BLOB,
  chat_identifier TEXT,
  service_name TEXT,
  room_name TEXT,
  account_login TEXT,
  is_archived INTEGER DEFAULT 0,
  last_addressed_handle TEXT,
  display_name TEXT,
  group_id TEXT,
  is_filtered INTEGER,
  last_read_message_timestamp INTEGER DEFAULT 0,
  is_blackholed INTEGER DEFAULT 0
);`;

/** Messages, reactions and group events. Dates are nanoseconds since 2001-01-01T00:00:00Z. */
const MESSAGE = `
CREATE TABLE message (
  ROWID INTEGER PRIMARY KEY AUTOINCREMENT,
  guid TEXT UNIQUE NOT NULL,
  text TEXT,
  handle_id INTEGER DEFAULT 0,
  subject TEXT,
  attributedBody BLOB,
  service TEXT,
  account TEXT,
  account_guid TEXT,
  error INTEGER DEFAULT 0,
  date INTEGER,
  date_read INTEGER,
  date_delivered INTEGER,
  is_delivered INTEGER DEFAULT 0,
  is_finished INTEGER DEFAULT 0,
  is_from_me INTEGER DEFAULT 0,
  is_empty INTEGER DEFAULT 0,
  is_read INTEGER DEFAULT 0,
  is_system_message INTEGER DEFAULT 0,
  is_sent INTEGER DEFAULT 0,
  was_downgraded INTEGER DEFAULT 0,
  cache_has_attachments INTEGER DEFAULT 0,
  cache_roomnames TEXT,
  is_audio_message INTEGER DEFAULT 0,
  date_played INTEGER,
  item_type INTEGER DEFAULT 0,
  other_handle INTEGER DEFAULT 0,
  group_title TEXT,
  group_action_type INTEGER DEFAULT 0,
  expire_state INTEGER DEFAULT 0,
  associated_message_guid TEXT,
  associated_message_type INTEGER DEFAULT 0,
  balloon_bundle_id TEXT,
  payload_data BLOB,
  expressive_send_style_id TEXT,
  associated_message_range_location INTEGER DEFAULT 0,
  associated_message_range_length INTEGER DEFAULT 0,
  message_summary_info BLOB,
  destination_caller_id TEXT,
  reply_to_guid TEXT,
  is_spam INTEGER DEFAULT 0,
  thread_originator_guid TEXT,
  thread_originator_part TEXT,
  date_retracted INTEGER DEFAULT 0,
  date_edited INTEGER DEFAULT 0,
  part_count INTEGER,
  associated_message_emoji TEXT DEFAULT NULL,
  schedule_type INTEGER DEFAULT 0,
  schedule_state INTEGER DEFAULT 0
);`;

/** Files. `original_guid` is NOT NULL UNIQUE since Ventura; Messages sets it to `guid`. */
const ATTACHMENT = `
CREATE TABLE attachment (
  ROWID INTEGER PRIMARY KEY AUTOINCREMENT,
  guid TEXT UNIQUE NOT NULL,
  created_date INTEGER DEFAULT 0,
  start_date INTEGER DEFAULT 0,
  filename TEXT,
  uti TEXT,
  mime_type TEXT,
  transfer_state INTEGER DEFAULT 0,
  is_outgoing INTEGER DEFAULT 0,
  user_info BLOB,
  transfer_name TEXT,
  total_bytes INTEGER DEFAULT 0,
  is_sticker INTEGER DEFAULT 0,
  hide_attachment INTEGER DEFAULT 0,
  original_guid TEXT UNIQUE NOT NULL
);`;

/** Join tables (identical in every release that has them) and the hard-delete log. */
const JOINS = `
CREATE TABLE chat_handle_join (
  chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
  handle_id INTEGER REFERENCES handle (ROWID) ON DELETE CASCADE,
  UNIQUE (chat_id, handle_id)
);
CREATE TABLE chat_message_join (
  chat_id INTEGER REFERENCES chat (ROWID) ON DELETE CASCADE,
  message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE,
  message_date INTEGER DEFAULT 0,
  PRIMARY KEY (chat_id, message_id)
);
CREATE TABLE message_attachment_join (
  message_id INTEGER REFERENCES message (ROWID) ON DELETE CASCADE,
  attachment_id INTEGER REFERENCES attachment (ROWID) ON DELETE CASCADE,
  UNIQUE (message_id, attachment_id)
);
CREATE TABLE deleted_messages (
  ROWID INTEGER PRIMARY KEY AUTOINCREMENT UNIQUE,
  guid TEXT NOT NULL
);`;

/** Apple's index names; `date_edited`, `date_read` and `date_delivered` are not indexed. */
const INDEXES = `
CREATE INDEX chat_handle_join_idx_handle_id ON chat_handle_join (handle_id);
CREATE INDEX chat_idx_chat_identifier ON chat (chat_identifier);
CREATE INDEX chat_idx_chat_identifier_service_name ON chat (chat_identifier, service_name);
CREATE INDEX chat_idx_chat_room_name_service_name ON chat (room_name, service_name);
CREATE INDEX chat_idx_group_id ON chat (group_id);
CREATE INDEX chat_idx_is_archived ON chat (is_archived);
CREATE INDEX chat_message_join_idx_chat_id ON chat_message_join (chat_id);
CREATE INDEX chat_message_join_idx_message_date_id_chat_id ON chat_message_join (chat_id, message_date, message_id);
CREATE INDEX chat_message_join_idx_message_id_only ON chat_message_join (message_id);
CREATE INDEX message_attachment_join_idx_attachment_id ON message_attachment_join (attachment_id);
CREATE INDEX message_attachment_join_idx_message_id ON message_attachment_join (message_id);
CREATE INDEX message_idx_associated_message ON message (associated_message_guid);
CREATE INDEX message_idx_cache_has_attachments ON message (cache_has_attachments);
CREATE INDEX message_idx_date ON message (date);
CREATE INDEX message_idx_expire_state ON message (expire_state);
CREATE INDEX message_idx_failed ON message (is_finished, is_from_me, error);
CREATE INDEX message_idx_handle ON message (handle_id, date);
CREATE INDEX message_idx_handle_id ON message (handle_id);
CREATE INDEX message_idx_is_read ON message (is_read, is_from_me, is_finished);
CREATE INDEX message_idx_is_sent_is_from_me_error ON message (is_sent, is_from_me, error);
CREATE INDEX message_idx_other_handle ON message (other_handle);
CREATE INDEX message_idx_thread_originator_guid ON message (thread_originator_guid);
CREATE INDEX message_idx_was_downgraded ON message (was_downgraded);`;

/** The room names of a message's chats, as Apple's triggers recompute `cache_roomnames`. */
const ROOMNAMES = (id: string) =>
  `(SELECT group_concat(c.room_name) FROM chat c JOIN chat_message_join j ON c.ROWID = j.chat_id WHERE j.message_id = ${id})`;

/**
 * Apple's triggers that do not need the omitted tables or Messages-only SQL functions. Without
 * "Recently Deleted" (`chat_recoverable_message_join`), removing a message's last chat join deletes it.
 */
const TRIGGERS = `
CREATE TRIGGER after_insert_on_message_attachment_join AFTER INSERT ON message_attachment_join BEGIN
  UPDATE message SET cache_has_attachments = 1 WHERE message.ROWID = NEW.message_id;
END;
CREATE TRIGGER after_delete_on_message_attachment_join AFTER DELETE ON message_attachment_join BEGIN
  DELETE FROM attachment WHERE attachment.ROWID = OLD.attachment_id
    AND (SELECT 1 FROM message_attachment_join WHERE attachment_id = OLD.attachment_id LIMIT 1) IS NULL;
END;
CREATE TRIGGER after_insert_on_chat_message_join AFTER INSERT ON chat_message_join BEGIN
  UPDATE message SET cache_roomnames = ${ROOMNAMES("NEW.message_id")} WHERE message.ROWID = NEW.message_id;
END;
CREATE TRIGGER after_delete_on_chat_message_join AFTER DELETE ON chat_message_join BEGIN
  UPDATE message SET cache_roomnames = ${ROOMNAMES("OLD.message_id")} WHERE message.ROWID = OLD.message_id;
  DELETE FROM message WHERE message.ROWID = OLD.message_id
    AND OLD.message_id NOT IN (SELECT message_id FROM chat_message_join WHERE message_id = OLD.message_id LIMIT 1);
END;
CREATE TRIGGER update_message_date_after_update_on_message AFTER UPDATE OF date ON message BEGIN
  UPDATE chat_message_join SET message_date = NEW.date WHERE message_id = NEW.ROWID AND message_date != NEW.date;
END;
CREATE TRIGGER add_to_deleted_messages AFTER DELETE ON message BEGIN
  INSERT INTO deleted_messages (guid) VALUES (OLD.guid);
END;
-- As Apple wrote it: guid = NULL never holds, so this trigger deletes nothing.
CREATE TRIGGER delete_associated_messages_after_delete_on_message AFTER DELETE ON message BEGIN
  DELETE FROM message WHERE OLD.associated_message_guid IS NULL
    AND associated_message_guid IS NOT NULL AND guid = OLD.associated_message_guid;
END;
CREATE TRIGGER after_delete_on_chat AFTER DELETE ON chat BEGIN
  DELETE FROM chat_message_join WHERE chat_id = OLD.ROWID;
END;`;

export const CHAT_DB_SCHEMA_SQL: string = [HANDLE, CHAT, MESSAGE, ATTACHMENT, JOINS, INDEXES, TRIGGERS]
  .join("\n")
  .trim();
