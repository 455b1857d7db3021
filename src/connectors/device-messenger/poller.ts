/**
 * Reading chat.db into the ingest pipeline (runner; chatdb.md §8). A tick reads the pending rows and the rows
 * after the ROWID cursor in batches; `planRead` (plan.ts) decides what each row becomes, and one ingest
 * transaction per batch stores its messages with the new cursor and the reader's state (high-water date,
 * pending list, fenced count), so a crash loses nothing and the cursor never waits for attachments. Ticks
 * must not overlap (the connector serialises them).
 */

import type { IdFactory } from "../../core/ids.ts";
import type { Names } from "../../core/names.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import type { Ingest, NormalizedMessage } from "../../ingest/ingest.ts";
import type { ChannelName } from "../../store/channel-list.ts";
import type { CursorStore } from "../../store/cursors.ts";
import {
  BATCH_ROWS,
  type ChatDb,
  ChatDbReadError,
  ChatDbUnavailable,
  fileIdentity,
  openChatDb,
} from "./chat-db.ts";
import { channelNamesOf } from "./chat-names.ts";
import { planRead } from "./plan.ts";
import { createReaderPosition, type ReaderPosition } from "./reader-position.ts";
import type { ReaderState } from "./reader-state.ts";
import { createRowMessages, type RowMessages, representable } from "./row-messages.ts";

export { NO_CHAT_WAIT_MS } from "./row-messages.ts";

/** Read even without a sign of change this often (a missed notification, a clock jump). */
const FORCE_EVERY_MS = 5_000;
/** How far back edited and unsent rows are looked for: Messages' 15-minute edit window, and a minute more. */
export const EDIT_WINDOW_MS = 16 * 60_000;
/** During a long read, progress is logged this often. */
const PROGRESS_EVERY_MS = 2_000;

const isoOrRaw = (ms: number): string => (representable(ms) ? new Date(ms).toISOString() : String(ms));

export interface PollerDeps {
  chatDbPath: string;
  attachmentDir: string;
  attachmentMaxBytes: number;
  homeDir: string;
  /** A new row dated this much before the high-water date is iCloud backfill (0: no fence). */
  backfillFenceMs: number;
  /** How long a message waits for its attachments before it goes out without them. */
  attachmentWaitMs: number;
  cursors: CursorStore;
  ids: IdFactory;
  clock: Clock;
  log: Logger;
  /** Contacts names for senders. */
  names: Names;
}

export interface PollerStatus {
  open: boolean;
  error: string | null;
  cursor: number | null;
  maxRowid: number | null;
  /** When the reader first saw unread rows it has not caught up with since. */
  behindSinceMs: number | null;
  /** Why queries on the open chat.db fail (locked, damaged), and since when; null when they work. */
  readError: { text: string; sinceMs: number } | null;
  pending: number;
  fenced: number;
  /** Rows after the cursor whose chat join has not landed yet (each waits NO_CHAT_WAIT_MS at most). */
  waitingForChat: number;
}

/** chat.db opened on demand and reopened when the file was replaced (another inode). */
function createChatDbSource(path: string, log: Logger) {
  let db: ChatDb | null = null;
  let identity = "";
  let error: string | null = null;
  return {
    /** The open chat.db (`fresh` when this call opened it), or null: `error()` says why. */
    open(): { db: ChatDb; fresh: boolean } | null {
      if (db && fileIdentity(path) === identity) return { db, fresh: false };
      if (db) {
        log.warn({ path }, "chat.db was replaced; reopening it");
        db.close();
        db = null;
      }
      try {
        db = openChatDb(path);
        identity = fileIdentity(path);
        error = null;
        return { db, fresh: true };
      } catch (err) {
        error = err instanceof ChatDbUnavailable ? err.message : String(err);
        return null;
      }
    },
    current: () => db,
    error: () => error,
    close() {
      db?.close();
      db = null;
    },
  };
}

/** What the reader knows between ticks (besides its stored position). */
interface ReadState {
  lastVersion: number;
  lastRead: number;
  stopping: boolean;
  behindSinceMs: number | null;
  readError: PollerStatus["readError"];
  /** MAX(ROWID) as of the last read, for health while chat.db cannot be queried. */
  lastMax: number | null;
  /** Chats new rows came from since names were last read; null: every chat's (chat.db just opened). */
  chats: Set<string> | null;
  /** The name and people last stored per channel. */
  names: Map<string, string>;
}

interface Reader {
  deps: PollerDeps;
  ingest: Ingest;
  rows: RowMessages;
  position: ReaderPosition;
  read: ReadState;
}

/** Notes since when rows have been waiting, so a stalled reader shows in health even if ticks fail. */
function updateLag({ read, position, deps }: Reader, chatDb: ChatDb): void {
  read.lastMax = chatDb.maxRowid();
  read.behindSinceMs =
    (position.cursor() ?? 0) < read.lastMax ? (read.behindSinceMs ?? deps.clock.now()) : null;
}

/** One read: the pending rows and the rows after the cursor, one batch, one transaction. */
async function readBatch(r: Reader, chatDb: ChatDb): Promise<{ rows: number; more: boolean }> {
  const { deps, rows, position } = r;
  const before = position.state();
  const from = position.cursor() ?? 0;
  const fresh = chatDb.rowsAfter(from, BATCH_ROWS);
  for (const row of fresh) if (row.chat_guid !== null) r.read.chats?.add(row.chat_guid);
  const waiting = chatDb.rowsByIds(before.pending.map((p) => p.rowid));
  const attachments = chatDb.attachmentsOf([...waiting, ...fresh].map((row) => row.rowid));
  const now = deps.clock.now();
  const plan = planRead({
    waiting: waiting.map((row) => rows.inputOf(row, attachments.get(row.rowid) ?? [], false)),
    fresh: fresh.map((row) => rows.inputOf(row, attachments.get(row.rowid) ?? [], true)),
    pending: before.pending,
    highWater: before.highWater ?? chatDb.dateNear(from),
    now,
    fenceMs: deps.backfillFenceMs,
    waitMs: deps.attachmentWaitMs,
  });
  const messages = (await Promise.all(plan.deliver.map((d) => rows.toMessage(d.input, d.late)))).filter(
    (m): m is NormalizedMessage => m !== null,
  );
  const next: ReaderState = {
    highWater: plan.highWater,
    pending: plan.pending,
    fenced: before.fenced + plan.fenced.length,
    fencedLastAt: plan.fenced.length > 0 ? now : before.fencedLastAt,
  };
  const to = plan.cursor ?? from;
  const changes = plan.reactions.flatMap((row) => rows.reactionOf(row, now) ?? []);
  if (
    messages.length > 0 ||
    changes.length > 0 ||
    to !== from ||
    JSON.stringify(next) !== JSON.stringify(before)
  )
    position.commit(messages, to, next, changes);
  if (plan.fenced.length > 0) {
    const dates = plan.fenced.map((row) => row.date_ms);
    deps.log.warn(
      {
        count: plan.fenced.length,
        from: isoOrRaw(Math.min(...dates)),
        to: isoOrRaw(Math.max(...dates)),
        high_water: plan.highWater === null ? null : isoOrRaw(plan.highWater),
      },
      "old rows re-inserted into chat.db (iCloud backfill) were not delivered",
    );
  }
  return { rows: fresh.length, more: !plan.held && fresh.length === BATCH_ROWS };
}

/**
 * Edits and unsends change rows in place, where a ROWID cursor never looks again: after chat.db changed,
 * the rows dated within EDIT_WINDOW_MS (Messages allows edits for 15 minutes, unsends for 2) that carry
 * an edit time are looked at again; ingest drops what it stored already (the key holds the edit time).
 */
function scanEdits({ deps, rows, position }: Reader, chatDb: ChatDb): void {
  const now = deps.clock.now();
  const changes = chatDb
    .editedSince(now - EDIT_WINDOW_MS)
    .flatMap((row) => rows.editChangeOf(row, now) ?? []);
  position.applyChanges(changes);
}

const nameKey = (n: ChannelName) => JSON.stringify([n.name, n.participants]);

/**
 * Channel names (chat-names.ts): every chat's once chat.db is opened, then those of the chats new rows
 * came from (a rename or a member change writes a row too); only changed ones are stored. A failure to
 * store them is logged and they are read again with the next change.
 */
function refreshNames({ read, ingest, deps }: Reader, chatDb: ChatDb): void {
  if (read.chats?.size === 0) return;
  try {
    const rows = chatDb.chatNames(read.chats ? [...read.chats] : undefined);
    const changed = channelNamesOf(rows).filter((n) => read.names.get(n.channelId) !== nameKey(n));
    if (changed.length > 0)
      ingest({ source: "device_messenger", messages: [], cursor: null, channelNames: changed });
    for (const n of changed) read.names.set(n.channelId, nameKey(n));
    read.chats = new Set();
  } catch (err) {
    deps.log.warn({ err: String(err) }, "chat names could not be read or stored; tried again later");
  }
}

/**
 * Reads and ingests everything new, one batch per transaction, yielding to the event loop between
 * batches (the API and signals are served during a long catch-up); returns the new rows looked at.
 * Without a change of `data_version`, pending messages or FORCE_EVERY_MS, it costs two tiny queries.
 */
async function readAll(r: Reader, chatDb: ChatDb, stillOpen: () => boolean): Promise<number> {
  const { read, position, deps } = r;
  const version = chatDb.dataVersion();
  const started = deps.clock.now();
  if (
    version === read.lastVersion &&
    position.state().pending.length === 0 &&
    started - read.lastRead < FORCE_EVERY_MS
  )
    return 0;
  const changed = version !== read.lastVersion;
  read.lastVersion = version;
  read.lastRead = started;
  updateLag(r, chatDb);
  let seen = 0;
  let reported = started;
  for (;;) {
    const batch = await readBatch(r, chatDb);
    seen += batch.rows;
    if (!batch.more || !stillOpen() || read.stopping) break;
    const now = deps.clock.now();
    if (now - reported >= PROGRESS_EVERY_MS) {
      reported = now;
      const behind = Math.max(0, chatDb.maxRowid() - (position.cursor() ?? 0));
      const rate = Math.round((seen / Math.max(1, now - started)) * 1000);
      deps.log.info(
        { done: seen, behind, rows_per_s: rate, eta_s: Math.ceil(behind / Math.max(1, rate)) },
        "catching up with chat.db",
      );
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  // The commit woke long polls, webhooks and channel pushes: they answer before the follow-up reads
  // (about 1 ms on a busy chat.db). After the new rows, so events are stored in the order things happened.
  if (changed && seen > 0) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (!stillOpen() || read.stopping) return seen;
  }
  if (changed) scanEdits(r, chatDb);
  if (changed) refreshNames(r, chatDb);
  updateLag(r, chatDb);
  return seen;
}

export function createPoller(deps: PollerDeps, ingest: Ingest) {
  const rows = createRowMessages(deps);
  const position = createReaderPosition({
    cursors: deps.cursors,
    ingest,
    log: deps.log,
    advanced: rows.forgetUpTo,
  });
  const source = createChatDbSource(deps.chatDbPath, deps.log);
  const read: ReadState = {
    lastVersion: -1,
    lastRead: 0,
    stopping: false,
    behindSinceMs: null,
    readError: null,
    lastMax: null,
    chats: null,
    names: new Map(),
  };
  const reader: Reader = { deps, ingest, rows, position, read };

  const open = (): ChatDb | null => {
    const opened = read.stopping ? null : source.open();
    if (!opened) return null;
    if (opened.fresh) {
      read.lastVersion = -1;
      read.chats = null;
      position.placeOn(opened.db);
    }
    return opened.db;
  };

  const tick = async (): Promise<number> => {
    try {
      const chatDb = open();
      const seen = chatDb ? await readAll(reader, chatDb, () => source.current() === chatDb) : 0;
      read.readError = null;
      return seen;
    } catch (err) {
      // Nothing was committed past the stored cursor: the next tick reads again even if chat.db is unchanged.
      read.lastVersion = -1;
      if (err instanceof ChatDbReadError)
        read.readError = { text: err.message, sinceMs: read.readError?.sinceMs ?? deps.clock.now() };
      throw err;
    }
  };

  const liveMax = (chatDb: ChatDb): number | null => {
    try {
      return chatDb.maxRowid();
    } catch {
      return read.lastMax;
    }
  };

  return {
    tick,
    /** Opens chat.db now (a first start places the cursor at its end); reading starts with `tick`. */
    open: () => void open(),
    /** The current tick ends after its batch; no tick reads after this. */
    stop: () => {
      read.stopping = true;
    },
    chatDb: source.current,
    status: (): PollerStatus => {
      const db = source.current();
      const s = position.state();
      return {
        open: db !== null,
        error: source.error(),
        cursor: position.cursor(),
        maxRowid: db ? (read.readError ? read.lastMax : liveMax(db)) : null,
        behindSinceMs: read.behindSinceMs,
        readError: read.readError,
        pending: s.pending.length,
        fenced: s.fenced,
        waitingForChat: rows.waitingForChat(),
      };
    },
    close: source.close,
  };
}
