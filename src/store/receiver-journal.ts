/**
 * The receiver's journal (receiver.db, its own file, opened like the state database: 0600 before
 * SQLite touches it, WAL, synchronous=FULL, a busy timeout). One row per accepted delivery id, committed
 * when `add` returns; `seq` is the acceptance order. A row is unfinished until its run ends; a finished
 * row drops its envelope and stays only as a seen id until `prune` removes it by age and count. A run of
 * several jobs (a batch, GW_RECEIVER_BATCH_MS) is started and finished in one transaction and its rows
 * share `batch`. `reaction` is the acknowledgement emoji gw may have put on the message and not yet taken
 * back (GW_RECEIVER_ACK_EMOJI): a row holding one is never pruned, so a restart still removes it.
 */
import type { Database } from "bun:sqlite";
import { openDatabase, type Schema } from "./open.ts";

const JOURNAL_SCHEMA: Schema = {
  name: "the receiver journal",
  migrations: [
    `
    CREATE TABLE receiver_jobs (
      seq          INTEGER PRIMARY KEY AUTOINCREMENT,
      delivery_id  TEXT NOT NULL UNIQUE,
      channel_id   TEXT NOT NULL,
      envelope     TEXT,
      received_at  INTEGER NOT NULL,
      runs         INTEGER NOT NULL DEFAULT 0,
      finished_at  INTEGER,
      outcome      TEXT,
      CHECK ((finished_at IS NULL) = (envelope IS NOT NULL))
    );
    CREATE INDEX receiver_jobs_unfinished ON receiver_jobs (seq) WHERE finished_at IS NULL;
    CREATE INDEX receiver_jobs_finished ON receiver_jobs (finished_at, seq) WHERE finished_at IS NOT NULL;
    `,
    `
    ALTER TABLE receiver_jobs ADD COLUMN message_id TEXT;
    ALTER TABLE receiver_jobs ADD COLUMN reaction TEXT;
    ALTER TABLE receiver_jobs ADD COLUMN batch TEXT;
    CREATE INDEX receiver_jobs_reactions ON receiver_jobs (seq) WHERE reaction IS NOT NULL;
    `,
  ],
};

export interface JournalJob {
  deliveryId: string;
  channelId: string;
  /** The envelope's JSON as accepted. */
  envelope: string;
  receivedAt: number;
  /** Runs started on it so far. */
  runs: number;
  /** The message's id, when it was journaled with one. */
  messageId?: string;
  /** The acknowledgement emoji that may stand on the message. */
  reaction?: string;
  /** The batch it last ran in (the batch's first delivery id), when that run held several jobs. */
  batch?: string;
}

/** An acknowledgement that may still stand on a message whose job has finished. */
export interface StandingReaction {
  deliveryId: string;
  messageId: string;
  reaction: string;
}

type Row = {
  delivery_id: string;
  channel_id: string;
  envelope: string;
  received_at: number;
  runs: number;
  message_id: string | null;
  reaction: string | null;
  batch: string | null;
};

const optional = <K extends string>(key: K, v: string | null) =>
  (v === null ? {} : { [key]: v }) as Partial<Record<K, string>>;

/** The journal's prepared statements, built once per connection. */
function statements(db: Database) {
  const has = db.prepare<{ hit: number }, [string]>(
    "SELECT 1 AS hit FROM receiver_jobs WHERE delivery_id = ?1",
  );
  const insert = db.prepare<unknown, [string, string, string, number, string | null, string | null]>(
    `INSERT INTO receiver_jobs (delivery_id, channel_id, envelope, received_at, message_id, reaction)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (delivery_id) DO NOTHING`,
  );
  const insertFinished = db.prepare<unknown, [string, string, number, string | null, string]>(
    `INSERT INTO receiver_jobs (delivery_id, channel_id, envelope, received_at, message_id, finished_at, outcome)
     VALUES (?1, ?2, NULL, ?3, ?4, ?3, ?5) ON CONFLICT (delivery_id) DO NOTHING`,
  );
  const started = db.prepare<unknown, [string, string | null]>(
    "UPDATE receiver_jobs SET runs = runs + 1, batch = ?2 WHERE delivery_id = ?1 AND finished_at IS NULL",
  );
  const finished = db.prepare<unknown, [string, number, string]>(
    `UPDATE receiver_jobs SET finished_at = ?2, outcome = ?3, envelope = NULL
     WHERE delivery_id = ?1 AND finished_at IS NULL`,
  );
  const setReaction = db.prepare<unknown, [string, string | null, string | null]>(
    "UPDATE receiver_jobs SET reaction = ?2, message_id = COALESCE(?3, message_id) WHERE delivery_id = ?1",
  );
  const unfinished = db.prepare<Row, []>(
    `SELECT delivery_id, channel_id, envelope, received_at, runs, message_id, reaction, batch
     FROM receiver_jobs INDEXED BY receiver_jobs_unfinished WHERE finished_at IS NULL ORDER BY seq`,
  );
  const standing = db.prepare<{ delivery_id: string; message_id: string; reaction: string }, []>(
    `SELECT delivery_id, message_id, reaction FROM receiver_jobs INDEXED BY receiver_jobs_reactions
     WHERE reaction IS NOT NULL AND finished_at IS NOT NULL AND message_id IS NOT NULL ORDER BY seq`,
  );
  const pruneOld = db.prepare<unknown, [number]>(
    "DELETE FROM receiver_jobs WHERE finished_at IS NOT NULL AND finished_at < ?1 AND reaction IS NULL",
  );
  const pruneOver = db.prepare<unknown, [number]>(
    `DELETE FROM receiver_jobs WHERE seq IN (
       SELECT seq FROM receiver_jobs INDEXED BY receiver_jobs_finished
       WHERE finished_at IS NOT NULL AND reaction IS NULL
       ORDER BY finished_at DESC, seq DESC LIMIT -1 OFFSET ?1)`,
  );
  const counts = db.prepare<{ unfinished: number | null; finished: number | null }, []>(
    "SELECT SUM(finished_at IS NULL) AS unfinished, SUM(finished_at IS NOT NULL) AS finished FROM receiver_jobs",
  );
  const startAll = db.transaction((ids: readonly string[], batch: string | null) => {
    for (const id of ids) started.run(id, batch);
  });
  const addCommand = db.transaction(
    (
      j: { deliveryId: string; channelId: string; messageId: string; at: number; outcome: string },
      drop: { deliveryIds: readonly string[]; outcome: string },
    ): boolean => {
      if (insertFinished.run(j.deliveryId, j.channelId, j.at, j.messageId, j.outcome).changes !== 1)
        return false;
      for (const id of drop.deliveryIds) finished.run(id, j.at, drop.outcome);
      return true;
    },
  );
  const finishAll = db.transaction((ids: readonly string[], at: number, outcome: string) => {
    for (const id of ids) finished.run(id, at, outcome);
  });

  return {
    has,
    insert,
    started,
    finished,
    setReaction,
    unfinished,
    standing,
    pruneOld,
    pruneOver,
    counts,
    startAll,
    addCommand,
    finishAll,
  };
}

export function openReceiverJournal(path: string) {
  const db = openDatabase(path, JOURNAL_SCHEMA);
  const q = statements(db);
  return {
    /** Whether the delivery id is journaled, finished or not. */
    has: (deliveryId: string): boolean => q.has.get(deliveryId) !== null,
    /**
     * Journals an accepted delivery (committed on return), with the acknowledgement it will get when
     * `reaction` is set; false when its id is already there.
     */
    add: (
      job: Omit<JournalJob, "runs" | "batch" | "reaction" | "messageId"> & {
        messageId?: string;
        reaction?: string | null;
      },
    ): boolean =>
      q.insert.run(
        job.deliveryId,
        job.channelId,
        job.envelope,
        job.receivedAt,
        job.messageId ?? null,
        job.reaction ?? null,
      ).changes === 1,
    /**
     * Journals a delivery that is finished as it arrives (a phone command: seen, never run) and, in the
     * same transaction, finishes the jobs it drops (/stop); false, and nothing changed, when it is known.
     */
    addCommand: (
      j: { deliveryId: string; channelId: string; messageId: string; at: number; outcome: string },
      drop: { deliveryIds: readonly string[]; outcome: string },
    ): boolean => q.addCommand.immediate(j, drop),
    /** Counts a run started on an unfinished job. */
    markStarted: (deliveryId: string): void => void q.started.run(deliveryId, null),
    /** Counts a run started on each of the jobs, in one transaction; `batch` names the run when it holds several. */
    markAllStarted: (deliveryIds: readonly string[], batch: string | null): void =>
      q.startAll.immediate(deliveryIds, batch),
    /** Ends a job: it will not run again; only its id is kept. */
    markFinished: (deliveryId: string, at: number, outcome: string): void =>
      void q.finished.run(deliveryId, at, outcome),
    /** Ends each of the jobs, in one transaction. */
    markAllFinished: (deliveryIds: readonly string[], at: number, outcome: string): void =>
      q.finishAll.immediate(deliveryIds, at, outcome),
    /** Records the acknowledgement that may stand on the job's message (null: none does any more). */
    setReaction: (deliveryId: string, reaction: string | null, messageId?: string): void =>
      void q.setReaction.run(deliveryId, reaction, messageId ?? null),
    /** The jobs whose run has not ended, in acceptance order. */
    unfinished: (): JournalJob[] =>
      q.unfinished.all().map((r) => ({
        deliveryId: r.delivery_id,
        channelId: r.channel_id,
        envelope: r.envelope,
        receivedAt: r.received_at,
        runs: r.runs,
        ...optional("messageId", r.message_id),
        ...optional("reaction", r.reaction),
        ...optional("batch", r.batch),
      })),
    /** Acknowledgements that may still stand on messages of finished jobs, in acceptance order. */
    standingReactions: (): StandingReaction[] =>
      q.standing
        .all()
        .map((r) => ({ deliveryId: r.delivery_id, messageId: r.message_id, reaction: r.reaction })),
    /**
     * Drops finished jobs that ended before `before`, then all but the `keep` most recent; how many went.
     * A job whose acknowledgement may still stand is kept until it is taken back.
     */
    prune(o: { before: number; keep: number }): number {
      return db
        .transaction(() => q.pruneOld.run(o.before).changes + q.pruneOver.run(o.keep).changes)
        .immediate();
    },
    counts() {
      const c = q.counts.get();
      return { unfinished: c?.unfinished ?? 0, finished: c?.finished ?? 0 };
    },
    close: (): void => db.close(),
  };
}

export type ReceiverJournal = ReturnType<typeof openReceiverJournal>;
