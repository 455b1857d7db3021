/**
 * The receiver's journal (receiver.db, its own file, opened like the state database: 0600 before
 * SQLite touches it, WAL, synchronous=FULL, a busy timeout). One row per accepted delivery id, committed
 * when `add` returns; `seq` is the acceptance order. A row is unfinished until its run ends; a finished
 * row drops its envelope and stays only as a seen id until `prune` removes it by age and count.
 */
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
}

type Row = { delivery_id: string; channel_id: string; envelope: string; received_at: number; runs: number };

export function openReceiverJournal(path: string) {
  const db = openDatabase(path, JOURNAL_SCHEMA);
  const has = db.prepare<{ hit: number }, [string]>(
    "SELECT 1 AS hit FROM receiver_jobs WHERE delivery_id = ?1",
  );
  const insert = db.prepare<unknown, [string, string, string, number]>(
    `INSERT INTO receiver_jobs (delivery_id, channel_id, envelope, received_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (delivery_id) DO NOTHING`,
  );
  const started = db.prepare<unknown, [string]>(
    "UPDATE receiver_jobs SET runs = runs + 1 WHERE delivery_id = ?1 AND finished_at IS NULL",
  );
  const finished = db.prepare<unknown, [string, number, string]>(
    `UPDATE receiver_jobs SET finished_at = ?2, outcome = ?3, envelope = NULL
     WHERE delivery_id = ?1 AND finished_at IS NULL`,
  );
  const unfinished = db.prepare<Row, []>(
    `SELECT delivery_id, channel_id, envelope, received_at, runs FROM receiver_jobs INDEXED BY receiver_jobs_unfinished
     WHERE finished_at IS NULL ORDER BY seq`,
  );
  const pruneOld = db.prepare<unknown, [number]>(
    "DELETE FROM receiver_jobs WHERE finished_at IS NOT NULL AND finished_at < ?1",
  );
  const pruneOver = db.prepare<unknown, [number]>(
    `DELETE FROM receiver_jobs WHERE seq IN (
       SELECT seq FROM receiver_jobs INDEXED BY receiver_jobs_finished WHERE finished_at IS NOT NULL
       ORDER BY finished_at DESC, seq DESC LIMIT -1 OFFSET ?1)`,
  );
  const counts = db.prepare<{ unfinished: number | null; finished: number | null }, []>(
    "SELECT SUM(finished_at IS NULL) AS unfinished, SUM(finished_at IS NOT NULL) AS finished FROM receiver_jobs",
  );

  return {
    /** Whether the delivery id is journaled, finished or not. */
    has: (deliveryId: string): boolean => has.get(deliveryId) !== null,
    /** Journals an accepted delivery (committed on return); false when its id is already there. */
    add: (job: Omit<JournalJob, "runs">): boolean =>
      insert.run(job.deliveryId, job.channelId, job.envelope, job.receivedAt).changes === 1,
    /** Counts a run started on an unfinished job. */
    markStarted: (deliveryId: string): void => void started.run(deliveryId),
    /** Ends a job: it will not run again; only its id is kept. */
    markFinished: (deliveryId: string, at: number, outcome: string): void =>
      void finished.run(deliveryId, at, outcome),
    /** The jobs whose run has not ended, in acceptance order. */
    unfinished: (): JournalJob[] =>
      unfinished.all().map((r) => ({
        deliveryId: r.delivery_id,
        channelId: r.channel_id,
        envelope: r.envelope,
        receivedAt: r.received_at,
        runs: r.runs,
      })),
    /** Drops finished jobs that ended before `before`, then all but the `keep` most recent; how many went. */
    prune(o: { before: number; keep: number }): number {
      return db.transaction(() => pruneOld.run(o.before).changes + pruneOver.run(o.keep).changes).immediate();
    },
    counts() {
      const c = counts.get();
      return { unfinished: c?.unfinished ?? 0, finished: c?.finished ?? 0 };
    },
    close: (): void => db.close(),
  };
}

export type ReceiverJournal = ReturnType<typeof openReceiverJournal>;
