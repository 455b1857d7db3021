/**
 * Reading chat.db into the ingest pipeline (runner). Each tick re-checks the messages waiting for
 * attachments and reads the rows after the stored ROWID cursor in batches; `planRead` (plan.ts) decides
 * what each row becomes, attachments are copied asynchronously, and one ingest transaction stores the
 * batch with the new cursor and the reader's state: the backfill fence's high-water date, the pending
 * list and the fenced-row count. So a crash loses nothing and the cursor never waits for attachments.
 * Rules (chatdb.md §8): first start begins at the current end, with the high-water date taken from the
 * tail; a row whose chat join has not landed yet holds the read for up to NO_CHAT_WAIT_MS, then is
 * skipped with a warning; a replaced or rebuilt database (other inode, or MAX(ROWID) below the cursor)
 * restarts from its end, loudly. A tick reads only when `PRAGMA data_version` moved, when messages are
 * pending, or every FORCE_EVERY_TICKS ticks; after a failed read or commit (chat.db locked, the disk
 * full) the next tick reads again whatever changed. Ticks must not overlap (the connector serialises them).
 * A row whose date has no RFC 3339 form (outside years 0001–9999: a float of 1e300, seconds taken for
 * nanoseconds) is stamped with the time it was read, its raw date kept in `raw`.
 */
import type { Source } from "../../core/envelope.ts";
import type { IdFactory } from "../../core/ids.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import { createSlots } from "../../core/slots.ts";
import type { Ingest, NormalizedMessage } from "../../ingest/ingest.ts";
import type { CursorStore } from "../../store/cursors.ts";
import { INBOUND_FILES_AT_ONCE } from "../connector.ts";
import { attachmentState, stageAttachments } from "./attachments.ts";
import {
  BATCH_ROWS,
  type ChatDb,
  type ChatDbAttachment,
  ChatDbReadError,
  type ChatDbRow,
  ChatDbUnavailable,
  fileIdentity,
  openChatDb,
} from "./chat-db.ts";
import { planRead, type RowInput } from "./plan.ts";
import { EMPTY_STATE, parseReaderState, type ReaderState } from "./reader-state.ts";
import { announcedAttachments, bodyText, channelOf, classifyRow, rawOf, rowText } from "./rows.ts";
import { OWN_SENDER } from "./sender.ts";

export const NO_CHAT_WAIT_MS = 10_000;
/** Read even without a sign of change this often (a missed notification, a clock jump). */
const FORCE_EVERY_MS = 5_000;
/** During a long read, progress is logged this often. */
const PROGRESS_EVERY_MS = 2_000;
const SOURCE: Source = "device_messenger";
/** The instants an envelope timestamp can hold: 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z. */
const FIRST_DATE_MS = -62_135_596_800_000;
const LAST_DATE_MS = 253_402_300_799_999;

const representable = (ms: number): boolean =>
  Number.isFinite(ms) && ms >= FIRST_DATE_MS && ms <= LAST_DATE_MS;
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

export function createPoller(deps: PollerDeps, ingest: Ingest) {
  const { log } = deps;
  let db: ChatDb | null = null;
  let identity = "";
  let lastVersion = -1;
  let lastRead = 0;
  let stopping = false;
  let error: string | null = null;
  let behindSinceMs: number | null = null;
  let readError: PollerStatus["readError"] = null;
  /** MAX(ROWID) as of the last read, for health while chat.db cannot be queried. */
  let lastMax: number | null = null;
  /** Rows without a chat join yet, by ROWID: when the reader first saw them. */
  const waitingForChat = new Map<number, number>();
  const copySlot = createSlots(INBOUND_FILES_AT_ONCE);

  // The cursor and state as stored: only this reader writes them, so they are read from gw.db once.
  let mine: { position: number; state: ReaderState } | null | undefined;
  const current = () => {
    if (mine === undefined) {
      const row = deps.cursors.get(SOURCE);
      mine = row ? { position: Number(row.position), state: parseReaderState(row.state) } : null;
    }
    return mine;
  };
  const cursor = (): number | null => current()?.position ?? null;
  const state = (): ReaderState => current()?.state ?? { ...EMPTY_STATE };
  /** Stores a batch with the new position and state, then remembers them. */
  const commit = (messages: NormalizedMessage[], position: number, next: ReaderState) => {
    ingest({ source: SOURCE, messages, cursor: String(position), cursorState: JSON.stringify(next) });
    mine = { position, state: next };
    // Rows the cursor passed (delivered or skipped) are never looked at again.
    for (const rowid of waitingForChat.keys()) if (rowid <= position) waitingForChat.delete(rowid);
  };

  const bootstrap = (chatDb: ChatDb, why: string) => {
    const end = chatDb.maxRowid();
    commit([], end, { ...state(), highWater: chatDb.dateNear(end), pending: [] });
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
    const at = cursor();
    if (at === null) bootstrap(db, "first start");
    else if (db.maxRowid() < at)
      bootstrap(db, `the database was rebuilt (its last ROWID ${db.maxRowid()} is below the cursor ${at})`);
    return db;
  };

  /** The planner's view of a row: its visible attachments, whether they are all ready, and the chat wait. */
  const inputOf = (row: ChatDbRow, all: readonly ChatDbAttachment[], fresh: boolean): RowInput => {
    const attachments = all.filter((a) => a.hide_attachment !== 1);
    const raw = rowText(row);
    const text = bodyText(row, raw);
    const announced = announcedAttachments(raw);
    const ready =
      announced <= attachments.length &&
      attachments.every((a) => {
        const s = attachmentState(a, { maxBytes: deps.attachmentMaxBytes, homeDir: deps.homeDir });
        return s === "ready" || "skip" in s;
      });
    let holdForChat = false;
    if (fresh && classifyRow(row, Math.max(attachments.length, announced), text) === "no_chat") {
      const first = waitingForChat.get(row.rowid) ?? deps.clock.now();
      waitingForChat.set(row.rowid, first);
      holdForChat = deps.clock.now() - first < NO_CHAT_WAIT_MS;
      if (!holdForChat)
        log.warn({ rowid: row.rowid, guid: row.guid }, "chat.db row never joined a chat; skipped");
    } else waitingForChat.delete(row.rowid);
    return { row, attachments, text, announced, ready, holdForChat };
  };

  const toMessage = async (input: RowInput, late: boolean): Promise<NormalizedMessage | null> => {
    const { row, attachments } = input;
    const channel = channelOf(row);
    if (!channel) return null;
    if (late)
      log.warn(
        { rowid: row.rowid, guid: row.guid, waited_ms: deps.attachmentWaitMs },
        "attachments still not ready; the message is delivered without them",
      );
    const own = row.is_from_me === 1;
    const dated = representable(row.date_ms);
    if (!dated)
      log.warn(
        { rowid: row.rowid, guid: row.guid, date: row.date_raw },
        "chat.db row has a date no timestamp can hold; it is stamped with the time it was read",
      );
    return {
      source: SOURCE,
      platformId: row.guid,
      channel,
      sender: own ? OWN_SENDER : { id: row.handle ?? "", displayName: row.handle ?? "" },
      text: input.text ?? "",
      replyToPlatformId: row.thread_originator_guid,
      timestampMs: dated ? row.date_ms : deps.clock.now(),
      attachments: await stageAttachments(attachments, {
        dir: deps.attachmentDir,
        maxBytes: deps.attachmentMaxBytes,
        homeDir: deps.homeDir,
        ids: deps.ids,
        log,
        messageGuid: row.guid,
        slot: copySlot,
      }),
      raw: rawOf(row, attachments),
      direction: own ? "outbound" : "inbound",
    };
  };

  /** Notes since when rows have been waiting, so a stalled reader shows in health even if ticks fail. */
  const updateLag = (chatDb: ChatDb) => {
    lastMax = chatDb.maxRowid();
    behindSinceMs = (cursor() ?? 0) < lastMax ? (behindSinceMs ?? deps.clock.now()) : null;
  };

  /** One read: the pending rows and the rows after the cursor, one batch at a time. */
  const readBatch = async (chatDb: ChatDb): Promise<{ rows: number; more: boolean }> => {
    const before = state();
    const from = cursor() ?? 0;
    const fresh = chatDb.rowsAfter(from, BATCH_ROWS);
    const waiting = chatDb.rowsByIds(before.pending.map((p) => p.rowid));
    const attachments = chatDb.attachmentsOf([...waiting, ...fresh].map((r) => r.rowid));
    const now = deps.clock.now();
    const plan = planRead({
      waiting: waiting.map((r) => inputOf(r, attachments.get(r.rowid) ?? [], false)),
      fresh: fresh.map((r) => inputOf(r, attachments.get(r.rowid) ?? [], true)),
      pending: before.pending,
      highWater: before.highWater ?? chatDb.dateNear(from),
      now,
      fenceMs: deps.backfillFenceMs,
      waitMs: deps.attachmentWaitMs,
    });
    const messages = (await Promise.all(plan.deliver.map((d) => toMessage(d.input, d.late)))).filter(
      (m): m is NormalizedMessage => m !== null,
    );
    const next: ReaderState = {
      highWater: plan.highWater,
      pending: plan.pending,
      fenced: before.fenced + plan.fenced.length,
      fencedLastAt: plan.fenced.length > 0 ? now : before.fencedLastAt,
    };
    const position = plan.cursor ?? from;
    const changed =
      messages.length > 0 || position !== from || JSON.stringify(next) !== JSON.stringify(before);
    if (changed) commit(messages, position, next);
    if (plan.fenced.length > 0) {
      const dates = plan.fenced.map((r) => r.date_ms);
      log.warn(
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
  };

  /**
   * Reads and ingests everything new, one batch per transaction, yielding to the event loop between
   * batches (the API and signals are served during a long catch-up); returns the new rows looked at.
   * Without a change of `data_version`, pending messages or FORCE_EVERY_MS, it costs two tiny queries.
   */
  const tick = async (): Promise<number> => {
    try {
      const seen = await readAll();
      readError = null;
      return seen;
    } catch (err) {
      // Nothing was committed past the stored cursor: the next tick reads again even if chat.db is unchanged.
      lastVersion = -1;
      if (err instanceof ChatDbReadError)
        readError = { text: err.message, sinceMs: readError?.sinceMs ?? deps.clock.now() };
      throw err;
    }
  };

  const readAll = async (): Promise<number> => {
    const chatDb = stopping ? null : open();
    if (!chatDb) return 0;
    const version = chatDb.dataVersion();
    const started = deps.clock.now();
    if (version === lastVersion && state().pending.length === 0 && started - lastRead < FORCE_EVERY_MS)
      return 0;
    lastVersion = version;
    lastRead = started;
    updateLag(chatDb);
    let seen = 0;
    let reported = started;
    for (;;) {
      const batch = await readBatch(chatDb);
      seen += batch.rows;
      if (!batch.more || db !== chatDb || stopping) break;
      const now = deps.clock.now();
      if (now - reported >= PROGRESS_EVERY_MS) {
        reported = now;
        const behind = Math.max(0, chatDb.maxRowid() - (cursor() ?? 0));
        const rate = Math.round((seen / Math.max(1, now - started)) * 1000);
        log.info(
          { done: seen, behind, rows_per_s: rate, eta_s: Math.ceil(behind / Math.max(1, rate)) },
          "catching up with chat.db",
        );
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    updateLag(chatDb);
    return seen;
  };

  const liveMax = (chatDb: ChatDb): number | null => {
    try {
      return chatDb.maxRowid();
    } catch {
      return lastMax;
    }
  };

  return {
    tick,
    /** Opens chat.db now (a first start places the cursor at its end); reading starts with `tick`. */
    open: () => void open(),
    /** The current tick ends after its batch; no tick reads after this. */
    stop: () => {
      stopping = true;
    },
    chatDb: () => db,
    status: (): PollerStatus => {
      const s = state();
      return {
        open: db !== null,
        error,
        cursor: cursor(),
        maxRowid: db ? (readError ? lastMax : liveMax(db)) : null,
        behindSinceMs,
        readError,
        pending: s.pending.length,
        fenced: s.fenced,
        waitingForChat: waitingForChat.size,
      };
    },
    close: () => {
      db?.close();
      db = null;
    },
  };
}
