/**
 * The state store: one SQLite connection and the per-table modules built on it. Opened once by the
 * composition root and passed down; `close()` checkpoints the WAL and closes the connection.
 */
import type { Database } from "bun:sqlite";
import { createAttachmentStore } from "./attachments.ts";
import { createChannelStore } from "./channels.ts";
import { createCursorStore } from "./cursors.ts";
import { createDeliveryStore } from "./deliveries.ts";
import { createIdempotencyStore } from "./idempotency.ts";
import { createIdentityStore } from "./identities.ts";
import { createMessageStore } from "./messages.ts";
import { openDatabase } from "./open.ts";
import { createReadStore } from "./reads.ts";

export function createStore(db: Database) {
  return {
    db,
    messages: createMessageStore(db),
    reads: createReadStore(db),
    attachments: createAttachmentStore(db),
    deliveries: createDeliveryStore(db),
    cursors: createCursorStore(db),
    identities: createIdentityStore(db),
    idempotency: createIdempotencyStore(db),
    channels: createChannelStore(db),
    close(): void {
      db.run("PRAGMA wal_checkpoint(TRUNCATE)");
      db.close();
    },
  };
}

export type Store = ReturnType<typeof createStore>;

export function openStore(path: string): Store {
  return createStore(openDatabase(path));
}
