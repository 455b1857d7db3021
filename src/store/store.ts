/**
 * The state store: one SQLite connection and the per-table modules built on it. Opened once by the
 * composition root and passed down (operator commands that only read open it read-only); writes that
 * belong together go through `transaction`; `close()` checkpoints the WAL and closes the connection.
 */
import type { Database } from "bun:sqlite";
import { createAttachmentStore } from "./attachments.ts";
import { createChannelListStore } from "./channel-list.ts";
import { createChannelStore } from "./channels.ts";
import { createCursorStore } from "./cursors.ts";
import { createDeliveryStore } from "./deliveries.ts";
import { createEventStore } from "./events.ts";
import { createIdempotencyStore } from "./idempotency.ts";
import { createIdentityStore } from "./identities.ts";
import { withReadModels } from "./message-writes.ts";
import { createMessageStore } from "./messages.ts";
import type { MigrationProgress } from "./migration-types.ts";
import { openDatabase, openDatabaseReadOnly } from "./open.ts";
import { createReadStore } from "./reads.ts";
import { createSearchStore } from "./search.ts";
import { createSearchIndex } from "./search-index.ts";

export function createStore(db: Database, opts: { readOnly?: boolean } = {}) {
  const searchIndex = createSearchIndex(db);
  const channelList = createChannelListStore(db);
  return {
    db,
    messages: withReadModels(createMessageStore(db), { index: searchIndex, channelList }, db),
    reads: createReadStore(db),
    attachments: createAttachmentStore(db),
    deliveries: createDeliveryStore(db),
    cursors: createCursorStore(db),
    identities: createIdentityStore(db),
    idempotency: createIdempotencyStore(db),
    channels: createChannelStore(db),
    channelList,
    events: createEventStore(db),
    search: createSearchStore(db),
    /** Runs `work` in one IMMEDIATE transaction: all of its writes or none (read models' writes last). */
    transaction<T>(work: () => T): T {
      return db.transaction(() => searchIndex.deferred(() => channelList.deferred(work))).immediate();
    },
    close(): void {
      if (!opts.readOnly) db.run("PRAGMA wal_checkpoint(TRUNCATE)");
      db.close();
    },
  };
}

export type Store = ReturnType<typeof createStore>;

/** Opens (creating or upgrading) the state database; a long migration reports to `onProgress`. */
export function openStore(path: string, opts: { onProgress?: MigrationProgress } = {}): Store {
  return createStore(openDatabase(path, undefined, opts));
}

/** The store of an existing state database, read-only (see openDatabaseReadOnly); null when none exists. */
export function openStoreReadOnly(path: string): Store | null {
  const db = openDatabaseReadOnly(path);
  return db ? createStore(db, { readOnly: true }) : null;
}
