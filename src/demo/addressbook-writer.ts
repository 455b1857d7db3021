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

/**
 * Creates the database at `path` (or opens the one a writer made before, keeping its shape: then `opts`
 * must say what they said at its creation) and returns a writer of its cards.
 */
export function createAddressBook(path: string, opts: AddressBookOptions = {}): AddressBookWriter {
  const db = new Database(path, { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  const has = new Map<string, Set<string>>();
  const existing = tableColumns(db, "ZABCDRECORD").size > 0;
  const ent = entityNumbers(existing ? db : null, opts.contactEntity ?? 22);
  if (existing) for (const table of Object.keys(TABLES)) has.set(table, tableColumns(db, table));
  else createTables(db, has, new Set(opts.omitColumns ?? []), opts.noPrimaryKeyTable ? null : ent);
  const contactEnt = ent("ABCDContact");
  const insert = (table: string, values: Record<string, string | number | null>): number => {
    const cols = Object.keys(values).filter((c) => has.get(table)?.has(c));
    const sql = `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map((c) => `$${c}`).join(", ")})`;
    const bound = Object.fromEntries(cols.map((c) => [c, values[c] ?? null]));
    return Number(db.query(sql).run(bound).lastInsertRowid);
  };
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
  const values = (pk: number, card: CardSpec) => {
    (card.phones ?? []).forEach((p, i) => {
      const spec = typeof p === "string" ? { number: p } : p;
      insert("ZABCDPHONENUMBER", {
        Z_ENT: ent("ABCDPhoneNumber"),
        Z_OPT: 1,
        ZISPRIMARY: i === 0 ? 1 : 0,
        ZORDERINGINDEX: i,
        ZOWNER: pk,
        Z22_OWNER: contactEnt,
        ZCOUNTRYCODE: spec.country ?? null,
        ZFULLNUMBER: spec.number,
        ZLABEL: spec.label ?? "_$!<Mobile>!$_",
        ZLASTFOURDIGITS: lastFour(spec.number),
        ZUNIQUEID: `${uuid()}:ABPhone`,
      });
    });
    (card.emails ?? []).forEach((e, i) => {
      insert("ZABCDEMAILADDRESS", {
        Z_ENT: ent("ABCDEmailAddress"),
        Z_OPT: 1,
        ZISPRIMARY: i === 0 ? 1 : 0,
        ZORDERINGINDEX: i,
        ZOWNER: pk,
        Z22_OWNER: contactEnt,
        ZADDRESS: e,
        ZADDRESSNORMALIZED: e.toLowerCase(),
        ZLABEL: "_$!<Home>!$_",
        ZUNIQUEID: `${uuid()}:ABEmail`,
      });
    });
  };
  const fields = (card: CardSpec): Record<string, string | number | null> => {
    const out: Record<string, string | number | null> = {};
    const set = (col: string, v: string | number | null | undefined) => {
      if (v !== undefined) out[col] = v;
    };
    set("ZFIRSTNAME", card.first);
    set("ZLASTNAME", card.last);
    set("ZMIDDLENAME", card.middle);
    set("ZNICKNAME", card.nickname);
    set("ZORGANIZATION", card.organization);
    set("ZDISPLAYFLAGS", card.company === undefined ? undefined : card.company ? 1 : 0);
    set("ZLINKID", card.linkId);
    set(
      "ZPREFERREDFORLINKNAME",
      card.preferredForLinkName === undefined ? undefined : card.preferredForLinkName ? 1 : 0,
    );
    return out;
  };
  const removeValues = (pk: number) => {
    db.run("DELETE FROM ZABCDPHONENUMBER WHERE ZOWNER = ?", [pk]);
    db.run("DELETE FROM ZABCDEMAILADDRESS WHERE ZOWNER = ?", [pk]);
  };

  return {
    path,
    addCard: (card) =>
      db.transaction(() => {
        const now = appleNow();
        const pk = insert("ZABCDRECORD", {
          Z_ENT: contactEnt,
          Z_OPT: 1,
          ZDISPLAYFLAGS: 0,
          ZPREFERREDFORLINKNAME: 0,
          ZCONTAINER1: container,
          ZCREATIONDATE: now,
          ZMODIFICATIONDATE: now,
          ZUNIQUEID: `${uuid()}:ABPerson`,
          ...fields(card),
        });
        values(pk, card);
        bumpMax();
        return pk;
      })(),
    editCard: (pk, change) =>
      db.transaction(() => {
        const set = Object.entries(fields(change)).filter(([c]) => has.get("ZABCDRECORD")?.has(c));
        const opt = has.get("ZABCDRECORD")?.has("Z_OPT") ? ", Z_OPT = Z_OPT + 1" : "";
        const modified = has.get("ZABCDRECORD")?.has("ZMODIFICATIONDATE")
          ? ", ZMODIFICATIONDATE = $modified"
          : "";
        db.query(
          `UPDATE ZABCDRECORD SET Z_PK = Z_PK${set.map(([c]) => `, ${c} = $${c}`).join("")}${opt}${modified} WHERE Z_PK = $pk`,
        ).run({ ...Object.fromEntries(set), ...(modified ? { modified: appleNow() } : {}), pk });
        if (change.phones !== undefined || change.emails !== undefined) {
          const card = {
            phones: change.phones ?? kept(pk, "phones"),
            emails: change.emails ?? kept(pk, "emails"),
          };
          removeValues(pk);
          values(pk, card);
        }
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

  function kept(pk: number, kind: "phones" | "emails"): string[] {
    return kind === "phones"
      ? db
          .query<{ n: string }, [number]>(
            "SELECT ZFULLNUMBER AS n FROM ZABCDPHONENUMBER WHERE ZOWNER = ? ORDER BY Z_PK",
          )
          .all(pk)
          .map((r) => r.n)
      : db
          .query<{ a: string }, [number]>(
            "SELECT ZADDRESS AS a FROM ZABCDEMAILADDRESS WHERE ZOWNER = ? ORDER BY Z_PK",
          )
          .all(pk)
          .map((r) => r.a);
  }
}
