/**
 * Versioned schema migrations, applied in order inside one transaction each; `PRAGMA user_version` records
 * the last one applied. Never edit a released migration: append a new one. Times are epoch milliseconds
 * (INTEGER); message order everywhere is (message_ts, id), and ids are monotonic ULIDs, so ties resolve in
 * arrival order. The indexes serve the hot queries in messages.ts, reads.ts and deliveries.ts;
 * test/integration/store-plans.test.ts pins their plans.
 */

import { RAW_MIGRATION } from "./migration-raw.ts";
import { SEARCH_MIGRATION } from "./migration-search.ts";
import type { Migration } from "./migration-types.ts";

export const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE messages (
    id                TEXT PRIMARY KEY,
    source            TEXT NOT NULL CHECK (source IN ('device_messenger', 'community_chat')),
    platform_id       TEXT,
    channel_id        TEXT NOT NULL,
    channel_type      TEXT NOT NULL CHECK (channel_type IN ('dm', 'group')),
    sender_id         TEXT NOT NULL,
    sender_name       TEXT NOT NULL,
    person_id         TEXT,
    text              TEXT NOT NULL,
    reply_to          TEXT REFERENCES messages(id),
    message_ts        INTEGER NOT NULL,
    direction         TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    allowlist_status  TEXT NOT NULL CHECK (allowlist_status IN ('allowed', 'unknown', 'outbound')),
    raw               TEXT NOT NULL DEFAULT '{}',
    created_at        INTEGER NOT NULL,
    CHECK ((direction = 'outbound') = (allowlist_status = 'outbound'))
  ) WITHOUT ROWID;
  CREATE UNIQUE INDEX messages_platform ON messages (source, platform_id) WHERE platform_id IS NOT NULL;
  CREATE INDEX messages_status_ts ON messages (allowlist_status, message_ts, id);
  CREATE INDEX messages_channel_status_ts ON messages (channel_id, allowlist_status, message_ts, id);
  CREATE INDEX messages_source_status_ts ON messages (source, allowlist_status, message_ts, id);

  CREATE TABLE channels (
    id                TEXT PRIMARY KEY,
    source            TEXT NOT NULL,
    channel_type      TEXT NOT NULL CHECK (channel_type IN ('dm', 'group')),
    platform_ref      TEXT NOT NULL,
    first_inbound_at  INTEGER NOT NULL,
    last_inbound_at   INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE read_marks (
    message_id  TEXT NOT NULL REFERENCES messages(id),
    agent_id    TEXT NOT NULL,
    read_at     INTEGER NOT NULL,
    PRIMARY KEY (message_id, agent_id)
  ) WITHOUT ROWID;

  CREATE TABLE read_runs (
    agent_id  TEXT NOT NULL,
    scope     TEXT NOT NULL,
    start_ts  INTEGER NOT NULL,
    start_id  TEXT NOT NULL,
    end_ts    INTEGER NOT NULL,
    end_id    TEXT NOT NULL,
    PRIMARY KEY (agent_id, scope, start_ts, start_id)
  ) WITHOUT ROWID;
  CREATE INDEX read_runs_end ON read_runs (scope, end_ts, end_id);

  CREATE TABLE attachments (
    id           TEXT PRIMARY KEY,
    message_id   TEXT NOT NULL REFERENCES messages(id),
    mime         TEXT NOT NULL,
    size_bytes   INTEGER NOT NULL CHECK (size_bytes >= 0),
    file_name    TEXT,
    platform_ref TEXT,
    created_at   INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX attachments_message ON attachments (message_id);
  CREATE INDEX attachments_stored_created ON attachments (created_at) WHERE file_name IS NOT NULL;

  CREATE TABLE webhook_deliveries (
    id               TEXT PRIMARY KEY,
    message_id       TEXT NOT NULL UNIQUE REFERENCES messages(id),
    channel_id       TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempt_count    INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,
    last_code        INTEGER,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);

  CREATE TABLE connector_cursors (
    source      TEXT PRIMARY KEY,
    position    TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
  ) WITHOUT ROWID;

  CREATE TABLE identity_links (
    person_id  TEXT NOT NULL,
    source     TEXT NOT NULL,
    PRIMARY KEY (person_id, source)
  ) WITHOUT ROWID;

  CREATE TABLE idempotency_keys (
    scope          TEXT NOT NULL,
    key            TEXT NOT NULL,
    body_hash      TEXT NOT NULL,
    state          TEXT NOT NULL CHECK (state IN ('in_flight', 'complete')),
    status_code    INTEGER,
    response_body  TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  `,
  // 2: a connector's position inside one channel (Discord: the newest message id processed there),
  // kept with the channel so catch-up after downtime resumes from it.
  `
  ALTER TABLE channels ADD COLUMN cursor TEXT;
  `,
  // 3: a connector's own state kept with its cursor (iMessage: the backfill fence's high-water date,
  // messages waiting for attachments), written in the same transaction as the cursor.
  `
  ALTER TABLE connector_cursors ADD COLUMN state TEXT;
  `,
  // 4: events (extensions.md §1). A deleted message stays as a tombstone with status 'deleted' (so it
  // leaves every status-indexed read at once), which the old CHECKs refused: messages is rebuilt with them
  // relaxed, same columns and indexes. Webhook deliveries carry a message or an event (one delivery per
  // message, one per event). Events are deduplicated by a platform key; `visible` is decided when stored.
  {
    rebuildsTables: true,
    sql: `
  CREATE TABLE messages_v4 (
    id                TEXT PRIMARY KEY,
    source            TEXT NOT NULL CHECK (source IN ('device_messenger', 'community_chat')),
    platform_id       TEXT,
    channel_id        TEXT NOT NULL,
    channel_type      TEXT NOT NULL CHECK (channel_type IN ('dm', 'group')),
    sender_id         TEXT NOT NULL,
    sender_name       TEXT NOT NULL,
    person_id         TEXT,
    text              TEXT NOT NULL,
    reply_to          TEXT REFERENCES messages(id),
    message_ts        INTEGER NOT NULL,
    direction         TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
    allowlist_status  TEXT NOT NULL CHECK (allowlist_status IN ('allowed', 'unknown', 'outbound', 'deleted')),
    raw               TEXT NOT NULL DEFAULT '{}',
    created_at        INTEGER NOT NULL,
    CHECK (allowlist_status = 'deleted' OR (direction = 'outbound') = (allowlist_status = 'outbound'))
  ) WITHOUT ROWID;
  INSERT INTO messages_v4 SELECT id, source, platform_id, channel_id, channel_type, sender_id, sender_name,
    person_id, text, reply_to, message_ts, direction, allowlist_status, raw, created_at FROM messages;
  DROP TABLE messages;
  ALTER TABLE messages_v4 RENAME TO messages;
  CREATE UNIQUE INDEX messages_platform ON messages (source, platform_id) WHERE platform_id IS NOT NULL;
  CREATE INDEX messages_status_ts ON messages (allowlist_status, message_ts, id);
  CREATE INDEX messages_channel_status_ts ON messages (channel_id, allowlist_status, message_ts, id);
  CREATE INDEX messages_source_status_ts ON messages (source, allowlist_status, message_ts, id);

  CREATE TABLE events (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('message.edited', 'message.deleted', 'reaction.added', 'reaction.removed')),
    source       TEXT NOT NULL,
    channel_id   TEXT NOT NULL,
    message_id   TEXT NOT NULL REFERENCES messages(id),
    sender_id    TEXT NOT NULL,
    sender_name  TEXT NOT NULL,
    person_id    TEXT,
    event_ts     INTEGER NOT NULL,
    data         TEXT NOT NULL,
    dedupe_key   TEXT NOT NULL UNIQUE,
    visible      INTEGER NOT NULL CHECK (visible IN (0, 1)),
    created_at   INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX events_visible ON events (visible, id);

  CREATE TABLE webhook_deliveries_v4 (
    id               TEXT PRIMARY KEY,
    message_id       TEXT NOT NULL REFERENCES messages(id),
    event_id         TEXT UNIQUE REFERENCES events(id),
    channel_id       TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
    attempt_count    INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  INTEGER,
    last_code        INTEGER,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO webhook_deliveries_v4 (id, message_id, channel_id, status, attempt_count, next_attempt_at,
    last_code, last_error, created_at, updated_at)
    SELECT id, message_id, channel_id, status, attempt_count, next_attempt_at, last_code, last_error,
      created_at, updated_at FROM webhook_deliveries;
  DROP TABLE webhook_deliveries;
  ALTER TABLE webhook_deliveries_v4 RENAME TO webhook_deliveries;
  CREATE UNIQUE INDEX webhook_deliveries_message ON webhook_deliveries (message_id) WHERE event_id IS NULL;
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
  `,
  },
  // 5: the channel list (extensions.md §2) as a read model: per channel its newest visible message,
  // allowed count and, for a one-to-one channel, the allowlisted person in it (kept by the message store's
  // writes, store/message-writes.ts: a trigger on messages would cost every insert a statement journal);
  // per agent and channel the allowed messages read (a trigger on read marks); names come from the
  // connectors. One index by newest activity (a source's page filters it); a person's channels by an index
  // that a new message does not move (an index per filter by activity cost ingest a page per channel
  // each; bench/search-profile.ts). Existing rows are counted here.
  `
  CREATE TABLE channel_list (
    channel_id       TEXT PRIMARY KEY,
    source           TEXT NOT NULL,
    channel_type     TEXT NOT NULL CHECK (channel_type IN ('dm', 'group')),
    name             TEXT NOT NULL DEFAULT '',
    participants     TEXT NOT NULL DEFAULT '[]',
    person_id        TEXT,
    last_visible_at  INTEGER,
    allowed_count    INTEGER NOT NULL DEFAULT 0
  ) WITHOUT ROWID;
  CREATE INDEX channel_list_recent ON channel_list (last_visible_at, channel_id)
    WHERE last_visible_at IS NOT NULL;
  CREATE INDEX channel_list_person ON channel_list (person_id) WHERE person_id IS NOT NULL;

  CREATE TABLE channel_reads (
    agent_id    TEXT NOT NULL,
    channel_id  TEXT NOT NULL,
    read_count  INTEGER NOT NULL,
    PRIMARY KEY (agent_id, channel_id)
  ) WITHOUT ROWID;

  CREATE INDEX events_message ON events (message_id, id);

  CREATE TRIGGER channel_reads_on_mark AFTER INSERT ON read_marks BEGIN
    INSERT INTO channel_reads (agent_id, channel_id, read_count)
    SELECT new.agent_id, m.channel_id, 1 FROM messages m
    WHERE m.id = new.message_id AND m.allowlist_status = 'allowed'
    ON CONFLICT (agent_id, channel_id) DO UPDATE SET read_count = read_count + 1;
  END;

  INSERT INTO channel_list (channel_id, source, channel_type, person_id, last_visible_at, allowed_count)
    SELECT channel_id, source, channel_type,
      max(CASE WHEN channel_type = 'dm' AND direction = 'inbound' THEN person_id END),
      max(message_ts), sum(allowlist_status = 'allowed')
    FROM messages WHERE allowlist_status IN ('allowed', 'outbound') GROUP BY channel_id;
  INSERT INTO channel_reads (agent_id, channel_id, read_count)
    SELECT r.agent_id, m.channel_id, count(*) FROM read_marks r JOIN messages m ON m.id = r.message_id
    WHERE m.allowlist_status = 'allowed' GROUP BY r.agent_id, m.channel_id;
  `,
  // 6: full-text search over visible messages (extensions.md §2); see migration-search.ts.
  SEARCH_MIGRATION,
  // 7: Discord raws stored whole by an older gw keep no other message's content; see migration-raw.ts.
  RAW_MIGRATION,
];
