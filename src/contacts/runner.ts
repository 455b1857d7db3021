/**
 * Keeps a contact book current (thin runner): reads the Contacts folder at start, then re-reads a
 * database when its size or modification time (or its WAL's) changes. Changes are seen through
 * file-change notifications, gathered for DEBOUNCE_MS, and through a check every `pollMs` (never faster)
 * for what notifications miss: a folder that appears, a new account, a file that failed to read. Only
 * changed files are read again; a file that fails keeps the cards it last gave and is tried again at the
 * next poll. `current()` is never torn: each re-read builds a new book and swaps it in. Never throws.
 */
import type { Logger } from "../core/ports.ts";
import { buildContactBook, type CardRow, type ContactBook, EMPTY_BOOK } from "./book.ts";
import { bookRegion, findAddressBooks, readAddressBook, stampOf } from "./reader.ts";
import { createFolderWatch } from "./watch.ts";

/** How long notifications are gathered before one check: Contacts writes a save as several commits. */
export const DEBOUNCE_MS = 250;

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
}

export interface ContactsStatus {
  /** Databases whose cards the book holds. */
  files: number;
  cards: number;
  /** What could not be read (the folder, a file), or null. */
  problem: string | null;
}

export interface Contacts {
  current(): ContactBook;
  /** Reads now, then follows changes. */
  start(): void;
  stop(): void;
  status(): ContactsStatus;
}

export function createContacts(o: ContactsOptions): Contacts {
  const log = o.log.child({ component: "contacts" });
  const defaultRegion = bookRegion(o);
  const held = new Map<string, { stamp: string; rows: CardRow[] }>();
  const failed = new Map<string, { stamp: string; problem: string }>();
  const phoneKeys = new Map<string, string | null>();
  let folderProblem: string | null = null;
  let book = EMPTY_BOOK;
  let lastProblem: string | null = null;
  let poll: ReturnType<typeof setInterval> | null = null;
  let pending: ReturnType<typeof setTimeout> | null = null;
  const watch = createFolderWatch(() => notified(), log);

  const problem = () =>
    [folderProblem, ...[...failed.values()].map((f) => f.problem)].filter(Boolean).join("; ") || null;

  /** Reads what changed; `retry`: also the files that failed, though unchanged (a poll). */
  function check(retry: boolean): void {
    const found = findAddressBooks(o.dir);
    folderProblem = found.problem;
    let changed = false;
    for (const path of [...held.keys()]) {
      if (found.files.includes(path)) continue;
      held.delete(path);
      changed = true;
    }
    for (const path of [...failed.keys()]) if (!found.files.includes(path)) failed.delete(path);
    for (const path of found.files) {
      const stamp = stampOf(path);
      if (held.get(path)?.stamp === stamp) continue;
      if (!retry && failed.get(path)?.stamp === stamp) continue;
      const r = readAddressBook(path);
      if (r.ok) {
        held.set(path, { stamp, rows: r.rows });
        failed.delete(path);
        changed = true;
      } else failed.set(path, { stamp, problem: r.problem });
    }
    if (changed) {
      book = buildContactBook(
        [...held.values()].flatMap((h) => h.rows),
        { defaultRegion, phoneKeys },
      );
      log.info({ files: held.size, cards: book.cards }, "contacts read");
    }
    const now = problem();
    if (now !== lastProblem && now !== null) log.warn({ problem: now }, "contacts cannot be read in full");
    lastProblem = now;
    watch.aim(o.dir);
  }

  /** A check from a timer: an unforeseen error is logged, never thrown into the event loop. */
  function safely(retry: boolean): void {
    try {
      check(retry);
    } catch (err) {
      log.error({ err: String(err) }, "contacts check failed");
    }
  }

  function notified(): void {
    if (pending !== null || poll === null) return;
    pending = setTimeout(() => {
      pending = null;
      safely(false);
    }, o.debounceMs ?? DEBOUNCE_MS);
  }

  return {
    current: () => book,
    start() {
      if (poll !== null) return;
      poll = setInterval(() => safely(true), Math.max(1, o.pollMs));
      safely(true);
    },
    stop() {
      if (poll !== null) clearInterval(poll);
      if (pending !== null) clearTimeout(pending);
      poll = pending = null;
      watch.close();
    },
    status: () => ({ files: held.size, cards: book.cards, problem: problem() }),
  };
}
