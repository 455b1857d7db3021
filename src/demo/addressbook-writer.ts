/**
 * Writes macOS Contacts databases (AddressBook-v22.abcddb) for `gw demo` and tests, never for a real
 * Contacts folder: the tables gw reads with Apple's own column names and types (addressbook-schema.ts),
 * an account container row, cards with phone numbers and e-mail addresses, in WAL mode like the real
 * stores. Each change is one transaction, so a reader watching sees each whole; a card can be edited or
 * removed, and a file the writer made can be opened again. `omitColumns`, `contactEntity` and
 * `noPrimaryKeyTable` make an older-looking file.
 */
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  ADDRESS_BOOK_FILE,
  createTables,
  entityNumbers,
  TABLES,
  tableColumns,
} from "./addressbook-schema.ts";

export { ADDRESS_BOOK_FILE } from "./addressbook-schema.ts";

export interface PhoneSpec {
  number: string;
  /** Contacts' label, e.g. `_$!<Mobile>!$_`. */
  label?: string;
  /** ZCOUNTRYCODE: written as given (gw reads it when it is an ISO region code, any case). */
  country?: string;
}

export interface CardSpec {
  first?: string | null;
  last?: string | null;
  middle?: string | null;
  nickname?: string | null;
  organization?: string | null;
  /** Shown as a company (ZDISPLAYFLAGS bit 0). */
  company?: boolean;
  phones?: readonly (string | PhoneSpec)[];
  emails?: readonly string[];
  /** ZLINKID shared with the same person's card in another account. */
  linkId?: string | null;
  preferredForLinkName?: boolean;
}

export interface AddressBookOptions {
  /** Columns to leave out (an older schema); Z_PK and the owner columns stay. */
  omitColumns?: readonly string[];
  /** Another number for ABCDContact (older models numbered entities differently); one not used above. */
  contactEntity?: number;
  /** No Z_PRIMARYKEY table at all. */
  noPrimaryKeyTable?: boolean;
}

export interface AddressBookWriter {
  readonly path: string;
  /** Adds a card; returns its Z_PK. */
  addCard(card: CardSpec): number;
  /** Changes the fields given (phones/emails given replace the card's). */
  editCard(pk: number, change: CardSpec): void;
  removeCard(pk: number): void;
  /** Adds a group (a ZABCDRECORD row that is not a card). */
  addGroup(name: string): number;
  close(): void;
}

/** Where a Contacts folder keeps a database: the top one, or Sources/<source>/ (created). */
export function addressBookPath(dir: string, source?: string): string {
  const path =
    source === undefined ? join(dir, ADDRESS_BOOK_FILE) : join(dir, "Sources", source, ADDRESS_BOOK_FILE);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

const APPLE_EPOCH_S = 978_307_200;
const appleNow = () => Date.now() / 1000 - APPLE_EPOCH_S;
const uuid = () => crypto.randomUUID().toUpperCase();
const lastFour = (n: string) => n.replace(/\D/g, "").slice(-4);

type Row = Record<string, string | number | null>;
type Entities = (name: string) => number;

/** The ZABCDRECORD columns a card spec sets (only those it gives). Pure. */
function cardFields(card: CardSpec): Row {
  const out: Row = {};
  const set = (col: string, v: string | number | null | undefined) => {
    if (v !== undefined) out[col] = v;
  };
  const bit = (b: boolean | undefined) => (b === undefined ? undefined : b ? 1 : 0);
  set("ZFIRSTNAME", card.first);
  set("ZLASTNAME", card.last);
  set("ZMIDDLENAME", card.middle);
  set("ZNICKNAME", card.nickname);
  set("ZORGANIZATION", card.organization);
  set("ZDISPLAYFLAGS", bit(card.company));
  set("ZLINKID", card.linkId);
  set("ZPREFERREDFORLINKNAME", bit(card.preferredForLinkName));
  return out;
}

/** The phone-number and e-mail rows of card `pk`, the first of each kind primary. Pure. */
function valueRows(pk: number, card: Pick<CardSpec, "phones" | "emails">, ent: Entities): [string, Row][] {
  const owner = (i: number) => ({
    Z_OPT: 1,
    ZISPRIMARY: i === 0 ? 1 : 0,
    ZORDERINGINDEX: i,
    ZOWNER: pk,
    Z22_OWNER: ent("ABCDContact"),
  });
  const phones = (card.phones ?? []).map((p, i): [string, Row] => {
    const spec = typeof p === "string" ? { number: p } : p;
    return [
      "ZABCDPHONENUMBER",
      {
        Z_ENT: ent("ABCDPhoneNumber"),
        ...owner(i),
        ZCOUNTRYCODE: spec.country ?? null,
        ZFULLNUMBER: spec.number,
        ZLABEL: spec.label ?? "_$!<Mobile>!$_",
        ZLASTFOURDIGITS: lastFour(spec.number),
        ZUNIQUEID: `${uuid()}:ABPhone`,
      },
    ];
  });
  const emails = (card.emails ?? []).map((e, i): [string, Row] => [
    "ZABCDEMAILADDRESS",
    {
      Z_ENT: ent("ABCDEmailAddress"),
      ...owner(i),
      ZADDRESS: e,
      ZADDRESSNORMALIZED: e.toLowerCase(),
      ZLABEL: "_$!<Home>!$_",
      ZUNIQUEID: `${uuid()}:ABEmail`,
    },
  ]);
  return [...phones, ...emails];
}

/** The database's tables: a file made before keeps its shape, a new one gets the shape `opts` asks for. */
function openTables(db: Database, opts: AddressBookOptions) {
  const has = new Map<string, Set<string>>();
  const existing = tableColumns(db, "ZABCDRECORD").size > 0;
  const ent = entityNumbers(existing ? db : null, opts.contactEntity ?? 22);
  if (existing) for (const table of Object.keys(TABLES)) has.set(table, tableColumns(db, table));
  else createTables(db, has, new Set(opts.omitColumns ?? []), opts.noPrimaryKeyTable ? null : ent);
  /** Inserts the columns the table has (a column it lacks is left out); returns the rowid. */
  const insert = (table: string, values: Row): number => {
    const cols = Object.keys(values).filter((c) => has.get(table)?.has(c));
    const sql = `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map((c) => `$${c}`).join(", ")})`;
    const bound = Object.fromEntries(cols.map((c) => [c, values[c] ?? null]));
    return Number(db.query(sql).run(bound).lastInsertRowid);
  };
  return { has, ent, insert };
}

/** The numbers or addresses card `pk` has now, in the order they were written. */
function keptValues(db: Database, pk: number): Required<Pick<CardSpec, "phones" | "emails">> {
  const column = (sql: string) =>
    db
      .query<{ v: string }, [number]>(sql)
      .all(pk)
      .map((r) => r.v);
  return {
    phones: column("SELECT ZFULLNUMBER AS v FROM ZABCDPHONENUMBER WHERE ZOWNER = ? ORDER BY Z_PK"),
    emails: column("SELECT ZADDRESS AS v FROM ZABCDEMAILADDRESS WHERE ZOWNER = ? ORDER BY Z_PK"),
  };
}

/**
 * Creates the database at `path` (or opens the one a writer made before, keeping its shape: then `opts`
 * must say what they said at its creation) and returns a writer of its cards.
 */
export function createAddressBook(path: string, opts: AddressBookOptions = {}): AddressBookWriter {
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  const { has, ent, insert } = openTables(db, opts);
  const bumpMax = () => {
    if (tableColumns(db, "Z_PRIMARYKEY").size > 0)
      db.run(
        "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZABCDRECORD) WHERE Z_NAME = 'ABCDRecord'",
      );
  };
  const container =
    db
      .query<{ pk: number }, [number]>(
        "SELECT Z_PK AS pk FROM ZABCDRECORD WHERE Z_ENT = ? ORDER BY Z_PK LIMIT 1",
      )
      .get(ent("CNCDContainer"))?.pk ??
    insert("ZABCDRECORD", {
      Z_ENT: ent("CNCDContainer"),
      Z_OPT: 1,
      ZUNIQUEID: `${uuid()}:ABContainer`,
      ZNAME: "Card",
    });
  const writeValues = (pk: number, card: Pick<CardSpec, "phones" | "emails">) => {
    for (const [table, row] of valueRows(pk, card, ent)) insert(table, row);
  };
  const removeValues = (pk: number) => {
    db.run("DELETE FROM ZABCDPHONENUMBER WHERE ZOWNER = ?", [pk]);
    db.run("DELETE FROM ZABCDEMAILADDRESS WHERE ZOWNER = ?", [pk]);
  };
  const record = has.get("ZABCDRECORD") ?? new Set<string>();

  return {
    path,
    addCard: (card) =>
      db.transaction(() => {
        const now = appleNow();
        const pk = insert("ZABCDRECORD", {
          Z_ENT: ent("ABCDContact"),
          Z_OPT: 1,
          ZDISPLAYFLAGS: 0,
          ZPREFERREDFORLINKNAME: 0,
          ZCONTAINER1: container,
          ZCREATIONDATE: now,
          ZMODIFICATIONDATE: now,
          ZUNIQUEID: `${uuid()}:ABPerson`,
          ...cardFields(card),
        });
        writeValues(pk, card);
        bumpMax();
        return pk;
      })(),
    editCard: (pk, change) =>
      db.transaction(() => {
        const set = Object.entries(cardFields(change)).filter(([c]) => record.has(c));
        const opt = record.has("Z_OPT") ? ", Z_OPT = Z_OPT + 1" : "";
        const modified = record.has("ZMODIFICATIONDATE") ? ", ZMODIFICATIONDATE = $modified" : "";
        db.query(
          `UPDATE ZABCDRECORD SET Z_PK = Z_PK${set.map(([c]) => `, ${c} = $${c}`).join("")}${opt}${modified} WHERE Z_PK = $pk`,
        ).run({ ...Object.fromEntries(set), ...(modified ? { modified: appleNow() } : {}), pk });
        if (change.phones === undefined && change.emails === undefined) return;
        const card = { ...keptValues(db, pk), ...definedOf(change) };
        removeValues(pk);
        writeValues(pk, card);
      })(),
    removeCard: (pk) =>
      db.transaction(() => {
        removeValues(pk);
        db.run("DELETE FROM ZABCDRECORD WHERE Z_PK = ?", [pk]);
      })(),
    addGroup: (name) =>
      db.transaction(() => {
        const pk = insert("ZABCDRECORD", {
          Z_ENT: ent("ABCDGroup"),
          Z_OPT: 1,
          ZCONTAINER: container,
          ZNAME: name,
        });
        bumpMax();
        return pk;
      })(),
    close: () => db.close(),
  };
}

/** The phones and e-mails a change gives (an absent kind is kept as it is). */
function definedOf(change: CardSpec): Pick<CardSpec, "phones" | "emails"> {
  return {
    ...(change.phones === undefined ? {} : { phones: change.phones }),
    ...(change.emails === undefined ? {} : { emails: change.emails }),
  };
}
