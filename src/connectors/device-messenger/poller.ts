/**
 * Reading chat.db into the ingest pipeline (runner). Each tick reads the rows after the stored ROWID
 * cursor in batches and hands them to ingest with the batch's last processed ROWID as the new cursor,
 * in the same transaction as the messages. Rules (chatdb.md §8): first start begins at the current end
 * (history is not imported); a row whose chat join has not landed yet holds the batch there for up to
 * NO_CHAT_WAIT_MS, then is skipped with a warning; a replaced or rebuilt database (other inode, or
 * MAX(ROWID) below the cursor) restarts from its end, loudly. A tick runs only when `PRAGMA
 * data_version` moved, or every FORCE_EVERY_TICKS ticks regardless.
 */
import type { Source } from "../../core/envelope.ts";
import type { IdFactory } from "../../core/ids.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import type { Ingest, NormalizedMessage } from "../../ingest/ingest.ts";
import type { CursorStore } from "../../store/cursors.ts";
import { stageAttachments } from "./attachments.ts";
import {
  BATCH_ROWS,
  type ChatDb,
  type ChatDbAttachment,
  type ChatDbRow,
  ChatDbUnavailable,
  fileIdentity,
  openChatDb,
} from "./chat-db.ts";
import { bodyText, channelOf, classifyRow, rawOf } from "./rows.ts";
import { OWN_SENDER } from "./sender.ts";

export const NO_CHAT_WAIT_MS = 10_000;
const FORCE_EVERY_TICKS = 5;
const SOURCE: Source = "device_messenger";

export interface PollerDeps {
  chatDbPath: string;
  attachmentDir: string;
  attachmentMaxBytes: number;
  homeDir: string;
  cursors: CursorStore;
  ids: IdFactory;
  clock: Clock;
  log: Logger;
}

export interface PollerStatus {
  open: boolean;
  error: string | null;
  cursor: number | null;
  maxRowid: number | null;
  /** When the reader first saw unread rows it has not caught up with since. */
  behindSinceMs: number | null;
}

export function createPoller(deps: PollerDeps, ingest: Ingest) {
  const { log } = deps;
  let db: ChatDb | null = null;
  let identity = "";
  let lastVersion = -1;
  let ticks = 0;
  let error: string | null = null;
  let behindSinceMs: number | null = null;
  const waitingForChat = new Map<number, number>();

  const cursor = (): number | null => {
    const c = deps.cursors.get(SOURCE);
    return c ? Number(c.position) : null;
  };

  const bootstrap = (chatDb: ChatDb, why: string) => {
    const end = chatDb.maxRowid();
    ingest({ source: SOURCE, messages: [], cursor: String(end) });
    log.warn(
      { rowid: end, reason: why },
      "iMessage reader starts at the current end of chat.db; earlier messages are not imported",
    );
  };

  const open = (): ChatDb | null => {
    if (db && fileIdentity(deps.chatDbPath) === identity) return db;
    if (db) {
      log.warn({ path: deps.chatDbPath }, "chat.db was replaced; reopening it");
      db.close();
      db = null;
    }
    try {
      db = openChatDb(deps.chatDbPath);
      identity = fileIdentity(deps.chatDbPath);
      error = null;
      lastVersion = -1;
    } catch (err) {
      error = err instanceof ChatDbUnavailable ? err.message : String(err);
      return null;
    }
    const stored = cursor();
    if (stored === null) bootstrap(db, "first start");
    else if (db.maxRowid() < stored)
      bootstrap(
        db,
        `the database was rebuilt (its last ROWID ${db.maxRowid()} is below the cursor ${stored})`,
      );
    return db;
  };

  const toMessage = (
    row: ChatDbRow,
    all: readonly ChatDbAttachment[],
  ): NormalizedMessage | "skip" | "wait" => {
    const atts = all.filter((a) => a.hide_attachment !== 1);
    const kind = classifyRow(row, atts.length);
    if (kind === "no_chat") {
      const first = waitingForChat.get(row.rowid) ?? deps.clock.now();
      waitingForChat.set(row.rowid, first);
      if (deps.clock.now() - first < NO_CHAT_WAIT_MS) return "wait";
      log.warn({ rowid: row.rowid, guid: row.guid }, "chat.db row never joined a chat; skipped");
      return "skip";
    }
    waitingForChat.delete(row.rowid);
    if (kind !== "deliver") {
      log.debug({ rowid: row.rowid, kind }, "chat.db row not delivered");
      return "skip";
    }
    const channel = channelOf(row);
    if (!channel) return "skip";
    const own = row.is_from_me === 1;
    return {
      source: SOURCE,
      platformId: row.guid,
      channel,
      sender: own ? OWN_SENDER : { id: row.handle ?? "", displayName: row.handle ?? "" },
      text: bodyText(row) ?? "",
      replyToPlatformId: row.thread_originator_guid,
      timestampMs: row.date_ms,
      attachments: stageAttachments(atts, {
        dir: deps.attachmentDir,
        maxBytes: deps.attachmentMaxBytes,
        homeDir: deps.homeDir,
        ids: deps.ids,
        log,
        messageGuid: row.guid,
      }),
      raw: rawOf(row, atts),
      direction: own ? "outbound" : "inbound",
    };
  };

  /** Notes since when rows have been waiting, so a stalled reader shows in health even if ticks fail. */
  const updateLag = (chatDb: ChatDb) => {
    behindSinceMs = (cursor() ?? 0) < chatDb.maxRowid() ? (behindSinceMs ?? deps.clock.now()) : null;
  };

  /** Reads and ingests everything new; returns the number of rows processed. */
  const tick = (): number => {
    const chatDb = open();
    if (!chatDb) return 0;
    updateLag(chatDb);
    ticks += 1;
    const version = chatDb.dataVersion();
    if (version === lastVersion && ticks % FORCE_EVERY_TICKS !== 0) return 0;
    lastVersion = version;
    let processed = 0;
    for (;;) {
      const from = cursor() ?? 0;
      const rows = chatDb.rowsAfter(from, BATCH_ROWS);
      const attachments = chatDb.attachmentsOf(rows.map((r) => r.rowid));
      const messages: NormalizedMessage[] = [];
      let last = from;
      let waiting = false;
      for (const row of rows) {
        const m = toMessage(row, attachments.get(row.rowid) ?? []);
        if (m === "wait") {
          waiting = true;
          break;
        }
        if (m !== "skip") messages.push(m);
        last = row.rowid;
        processed += 1;
      }
      if (last !== from) ingest({ source: SOURCE, messages, cursor: String(last) });
      if (waiting || rows.length < BATCH_ROWS) break;
    }
    updateLag(chatDb);
    return processed;
  };

  return {
    tick,
    chatDb: () => db,
    status: (): PollerStatus => ({
      open: db !== null,
      error,
      cursor: cursor(),
      maxRowid: db ? db.maxRowid() : null,
      behindSinceMs,
    }),
    close: () => {
      db?.close();
      db = null;
    },
  };
}
