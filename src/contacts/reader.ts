/**
 * Reads macOS Contacts' databases (runner): the folder's AddressBook-v22.abcddb and every
 * Sources/<id>/AddressBook-v22.abcddb (one per account; the top file holds few or no cards), each opened
 * read-only and never written, each query built from the columns present (queries.ts). A file is read in
 * steps (steps.ts: a yield every ROWS_PER_STEP rows) inside one read transaction, so a read spread over
 * many slices still sees one snapshot of the file. Nothing here throws for a file: a folder that is
 * missing, a file that cannot be opened or is not SQLite, a query that fails, each is a problem in words,
 * and the other files are still read.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildContactBook, type CardRow, type ContactBook } from "./book.ts";
import { regionOfLocale } from "./keys.ts";
import {
  type Columns,
  compareValues,
  emailQuery,
  entityQuery,
  phoneQuery,
  recordQuery,
  type ValueOrder,
} from "./queries.ts";
import { drain, type Steps } from "./steps.ts";

export const ADDRESS_BOOK_FILE = "AddressBook-v22.abcddb";
export const SOURCES_DIR = "Sources";
/** How long a read waits for Contacts' own lock before it fails (and is tried again at the next change). */
export const BUSY_TIMEOUT_MS = 100;
/** Rows stepped between two yields: a row costs about a microsecond, so a step stays well under 1 ms. */
export const ROWS_PER_STEP = 128;

export interface FoundFiles {
  /** The top database first, then Sources/* in name order. */
  files: string[];
  /** Why there is nothing to read, or null. */
  problem: string | null;
}

/** The databases of a Contacts folder. */
export function findAddressBooks(dir: string): FoundFiles {
  if (!isDir(dir)) return { files: [], problem: `no Contacts folder at ${dir}` };
  const top = join(dir, ADDRESS_BOOK_FILE);
  const sourcesDir = join(dir, SOURCES_DIR);
  let sources: string[] = [];
  try {
    sources = isDir(sourcesDir) ? readdirSync(sourcesDir).sort() : [];
  } catch (err) {
    return { files: [], problem: `cannot list ${sourcesDir}: ${messageOf(err)}` };
  }
  const files = [top, ...sources.map((s) => join(sourcesDir, s, ADDRESS_BOOK_FILE))].filter((f) =>
    existsSync(f),
  );
  return files.length > 0
    ? { files, problem: null }
    : { files, problem: `no ${ADDRESS_BOOK_FILE} in ${dir} or its ${SOURCES_DIR}/` };
}

export type FileRead = { ok: true; rows: CardRow[] } | { ok: false; problem: string };

/** The contact cards of one database, or why they cannot be read. */
export function readAddressBook(path: string): FileRead {
  return drain(readAddressBookSteps(path));
}

/** readAddressBook in steps; closing the steps early closes the file. */
export function* readAddressBookSteps(path: string): Steps<FileRead> {
  let db: Database | null = null;
  try {
    db = new Database(path, { readonly: true });
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // One snapshot for every query of the file, however many slices the read is spread over.
    db.run("BEGIN");
    return { ok: true, rows: yield* readRows(db) };
  } catch (err) {
    return { ok: false, problem: `${path}: ${messageOf(err)}` };
  } finally {
    db?.close();
  }
}

function* readRows(db: Database): Steps<CardRow[]> {
  const columns = (table: string): Columns =>
    new Set(
      db
        .query<{ name: string }, []>(`PRAGMA table_info(${table})`)
        .all()
        .map((c) => c.name),
    );
  const record = columns("ZABCDRECORD");
  if (record.size === 0) throw new Error("not a Contacts database (no ZABCDRECORD table)");
  const eq = entityQuery(columns("Z_PRIMARYKEY"));
  const entities =
    eq === null
      ? null
      : db
          .query<{ ent: number }, []>(eq)
          .all()
          .map((r) => r.ent);
  const rq = recordQuery(record, entities !== null && entities.length > 0 ? entities : null);
  if (rq === null) throw new Error("ZABCDRECORD has no Z_PK column");
  const phones = yield* valuesByOwner(db, phoneQuery(columns("ZABCDPHONENUMBER")), (r) => ({
    number: String(r.number),
    country: typeof r.country === "string" ? r.country : null,
  }));
  const emails = yield* valuesByOwner(db, emailQuery(columns("ZABCDEMAILADDRESS")), (r) => String(r.address));
  const rows: CardRow[] = [];
  yield* eachRow(db, rq, (r) => {
    rows.push({
      firstName: text(r.first_name),
      lastName: text(r.last_name),
      nickname: text(r.nickname),
      organization: text(r.organization),
      company: (Number(r.display_flags ?? 0) & 1) === 1,
      linkId: text(r.link_id),
      preferredForLinkName: Number(r.preferred_for_link_name ?? 0) === 1,
      phones: phones(Number(r.pk)),
      emails: emails(Number(r.pk)),
    });
  });
  return rows;
}

/** Steps through every row of `sql`, a yield every ROWS_PER_STEP rows. */
function* eachRow(db: Database, sql: string, each: (row: Record<string, unknown>) => void): Steps<void> {
  const statement = db.prepare<Record<string, unknown>, []>(sql);
  try {
    let n = 0;
    for (const r of statement.iterate()) {
      each(r);
      if (++n % ROWS_PER_STEP === 0) yield;
    }
  } finally {
    statement.finalize();
  }
}

/** A card's values in the order Contacts lists them (queries.ts compareValues), by owner. */
function* valuesByOwner<T>(
  db: Database,
  sql: string | null,
  value: (row: Record<string, unknown>) => T,
): Steps<(owner: number) => T[]> {
  const byOwner = new Map<number, { v: T; o: ValueOrder }[]>();
  if (sql !== null)
    yield* eachRow(db, sql, (r) => {
      const owner = Number(r.owner);
      const entry = { v: value(r), o: { is_primary: r.is_primary, ordering: r.ordering, pk: r.pk } };
      const list = byOwner.get(owner);
      if (list) list.push(entry);
      else byOwner.set(owner, [entry]);
    });
  return (owner) => (byOwner.get(owner) ?? []).sort((a, b) => compareValues(a.o, b.o)).map((e) => e.v);
}

export interface BookRead {
  book: ContactBook;
  /** Databases read. */
  files: number;
  /** Files or folders that could not be read, in words; the book holds what could. */
  problems: string[];
}

/**
 * Reads every database of a Contacts folder into one book. `defaultRegion` null: the region of `locale`
 * (by default the system's, Intl.DateTimeFormat().resolvedOptions().locale).
 */
export function readContactBook(
  dir: string,
  opts: { defaultRegion: string | null; locale?: string },
): BookRead {
  const found = findAddressBooks(dir);
  const rows: CardRow[] = [];
  const problems = found.problem === null ? [] : [found.problem];
  let files = 0;
  for (const f of found.files) {
    const r = readAddressBook(f);
    if (r.ok) {
      files++;
      rows.push(...r.rows);
    } else problems.push(r.problem);
  }
  const book = buildContactBook(rows, { defaultRegion: bookRegion(opts) });
  return { book, files, problems };
}

/** GW_DEFAULT_REGION, else the locale's region. */
export function bookRegion(opts: { defaultRegion: string | null; locale?: string }): string | null {
  return opts.defaultRegion ?? regionOfLocale(opts.locale ?? Intl.DateTimeFormat().resolvedOptions().locale);
}

/**
 * Size, modification time and inode of a database and its WAL, which change with every commit Contacts
 * makes. A missing WAL and an empty one are the same: SQLite creates the empty WAL (and the -shm) that any
 * WAL reader needs, gw's own first read included, and that changes nothing to read.
 */
export function stampOf(path: string): string {
  const part = (p: string, emptyIsNone: boolean) => {
    try {
      const s = statSync(p);
      return emptyIsNone && s.size === 0 ? "-" : `${s.size}:${s.mtimeMs}:${s.ino}`;
    } catch {
      return "-";
    }
  };
  return `${part(path, false)}|${part(`${path}-wal`, true)}`;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
