/**
 * Keeps a contact book current (thin runner): reads the Contacts folder at start, then re-reads a
 * database when its size or modification time (or its WAL's) changes. Changes are seen through
 * file-change notifications, gathered for DEBOUNCE_MS, and through a check every `pollMs` (never faster)
 * for what notifications miss: a folder that appears, a new account, a file that failed to read. Only
 * changed files are read again; a file that fails keeps the cards it last gave and is tried again at the
 * next poll. A check never holds the event loop for long: its reads and its build run in slices of about
 * SLICE_MS (steps.ts), one check at a time (one asked for meanwhile runs after it). `current()` is never
 * torn: a check changes nothing until its last step, which swaps in the new book, the files it came from
 * and their problems at once. `ready()` settles when the first check ends, whatever it found. Never throws.
 */
import type { Logger } from "../core/ports.ts";
import { buildContactBookSteps, type CardRow, type ContactBook, EMPTY_BOOK } from "./book.ts";
import { bookRegion, findAddressBooks, readAddressBookSteps, stampOf } from "./reader.ts";
import { Cancelled, pauseForLoop, runSliced, type SliceStats, type Steps } from "./steps.ts";
import { createFolderWatch } from "./watch.ts";

/** How long notifications are gathered before one check: Contacts writes a save as several commits. */
export const DEBOUNCE_MS = 250;
/**
 * How long a check runs before it lets the event loop run. A slice ends within one step of it (a step:
 * 4 cards parsed, 128 rows read or 128 items merged, each well under a millisecond once warm); what can
 * still hold the loop longer is a garbage collection landing in a slice (libphonenumber allocates ~25 kB
 * per number parsed: 10,000 cards cause about twelve, of 1.3-3 ms each). bench/README.md has the figures.
 */
export const SLICE_MS = 2;

export interface ContactsOptions {
  /** The Contacts folder (GW_CONTACTS_DIR). */
  dir: string;
  /** GW_DEFAULT_REGION; null: the locale's region. */
  defaultRegion: string | null;
  log: Logger;
  /** Fallback check period (GW_DEVICE_POLL_INTERVAL_MS). */
  pollMs: number;
  debounceMs?: number;
  /** The locale whose region stands in for GW_DEFAULT_REGION; the system's by default. */
  locale?: string;
  /** Slice length (SLICE_MS by default). */
  sliceMs?: number;
  /** A monotonic clock in milliseconds for the slices; performance.now by default. */
  now?: () => number;
}

export interface ContactsStatus {
  /** Databases whose cards the book holds. */
  files: number;
  cards: number;
  /** What could not be read (the folder, a file), or null. */
  problem: string | null;
}

export interface Contacts {
  /** The book as of the last finished check (empty before the first). */
  current(): ContactBook;
  /** Starts reading (in slices, returning at once), then follows changes. */
  start(): void;
  /** Settles once the first read after start() has ended, whatever its result (or at stop()). */
  ready(): Promise<void>;
  stop(): void;
  status(): ContactsStatus;
}

/** What a check swaps in at its end, all together. */
interface Shown {
  book: ContactBook;
  held: Map<string, { stamp: string; rows: CardRow[] }>;
  failed: Map<string, { stamp: string; problem: string }>;
  folderProblem: string | null;
}

const problemOf = (s: Shown): string | null =>
  [s.folderProblem, ...[...s.failed.values()].map((f) => f.problem)].filter(Boolean).join("; ") || null;

/**
 * Reads what changed since `shown` (`retry`: also the files that failed, though unchanged: a poll) and
 * builds the book again if any file's cards changed. Touches nothing: the caller swaps `next` in.
 */
function* readChanges(
  dir: string,
  shown: Shown,
  retry: boolean,
  build: Parameters<typeof buildContactBookSteps>[1],
): Steps<{ next: Shown; changed: boolean }> {
  const found = findAddressBooks(dir);
  const held = new Map([...shown.held].filter(([path]) => found.files.includes(path)));
  const failed = new Map([...shown.failed].filter(([path]) => found.files.includes(path)));
  let changed = held.size !== shown.held.size;
  for (const path of found.files) {
    const stamp = stampOf(path);
    if (held.get(path)?.stamp === stamp) continue;
    if (!retry && failed.get(path)?.stamp === stamp) continue;
    const r = yield* readAddressBookSteps(path);
    if (r.ok) {
      held.set(path, { stamp, rows: r.rows });
      failed.delete(path);
      changed = true;
    } else failed.set(path, { stamp, problem: r.problem });
  }
  const book = changed
    ? yield* buildContactBookSteps(
        [...held.values()].flatMap((h) => h.rows),
        build,
      )
    : shown.book;
  return { next: { book, held, failed, folderProblem: found.problem }, changed };
}

export function createContacts(o: ContactsOptions): Contacts {
  const log = o.log.child({ component: "contacts" });
  const defaultRegion = bookRegion(o);
  const phoneKeys = new Map<string, string | null>();
  const now = o.now ?? (() => performance.now());
  let shown: Shown = { book: EMPTY_BOOK, held: new Map(), failed: new Map(), folderProblem: null };
  let lastProblem: string | null = null;
  let poll: ReturnType<typeof setInterval> | null = null;
  let pending: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by stop(): a check of an earlier life stops at its next pause, having changed nothing. */
  let life = 0;
  let running: { life: number; again: boolean | null } | null = null;
  let settleReady: () => void = () => {};
  const firstRead = new Promise<void>((resolve) => {
    settleReady = resolve;
  });
  const watch = createFolderWatch(() => notified(), log);

  async function checkOnce(retry: boolean, mine: number): Promise<void> {
    const stats: SliceStats = { slices: 0, longestMs: 0 };
    const t0 = now();
    try {
      const r = await runSliced(readChanges(o.dir, shown, retry, { defaultRegion, phoneKeys }), {
        sliceMs: o.sliceMs ?? SLICE_MS,
        now,
        pause: pauseForLoop,
        cancelled: () => life !== mine,
        stats,
      });
      if (life !== mine) return;
      shown = r.next;
      if (r.changed) {
        const read = { files: shown.held.size, cards: shown.book.cards, ms: Math.round(now() - t0) };
        log.info({ ...read, slices: stats.slices, longest_slice_ms: stats.longestMs }, "contacts read");
      }
      const problem = problemOf(shown);
      if (problem !== lastProblem && problem !== null)
        log.warn({ problem }, "contacts cannot be read in full");
      lastProblem = problem;
      watch.aim(o.dir);
    } catch (err) {
      if (!(err instanceof Cancelled)) log.error({ err: String(err) }, "contacts check failed");
    }
  }

  /** Runs a check on the next turn, or right after the one running (a poll's retry wins when both asked). */
  function check(retry: boolean): void {
    if (running !== null && running.life === life) {
      running.again = (running.again ?? false) || retry;
      return;
    }
    const me = { life, again: null as boolean | null };
    running = me;
    void (async () => {
      let r = retry;
      await pauseForLoop(); // start() and the timers return at once; the first slice runs on the next turn
      for (;;) {
        if (me.life !== life) break;
        await checkOnce(r, me.life);
        settleReady();
        if (me.again === null || me.life !== life) break;
        r = me.again;
        me.again = null;
      }
      if (running === me) running = null;
    })();
  }

  function notified(): void {
    if (pending !== null || poll === null) return;
    pending = setTimeout(() => {
      pending = null;
      check(false);
    }, o.debounceMs ?? DEBOUNCE_MS);
  }

  return {
    current: () => shown.book,
    start() {
      if (poll !== null) return;
      poll = setInterval(() => check(true), Math.max(1, o.pollMs));
      check(true);
    },
    ready: () => firstRead,
    stop() {
      if (poll !== null) clearInterval(poll);
      if (pending !== null) clearTimeout(pending);
      poll = pending = null;
      life++;
      watch.close();
      settleReady();
    },
    status: () => ({ files: shown.held.size, cards: shown.book.cards, problem: problemOf(shown) }),
  };
}
