/**
 * The shape of an AddressBook-v22.abcddb as the demo's writer makes it (addressbook-writer.ts): the tables
 * and columns gw reads, with Apple's names and Core Data's types, and the entity numbers of the macOS 26
 * ABAddressBook model in Z_PRIMARYKEY (facts and sources in docs/CONTACTS.md). Only what gw or a realistic
 * file needs; the real ZABCDRECORD has about a hundred columns.
 */
import type { Database } from "bun:sqlite";

export const ADDRESS_BOOK_FILE = "AddressBook-v22.abcddb";

/** Core Data entity numbers of the ABAddressBook model on macOS 26 (Z_PRIMARYKEY: number, name, parent). */
const ENTITIES: readonly (readonly [number, string, number])[] = [
  [11, "ABCDEmailAddress", 0],
  [15, "ABCDPhoneNumber", 0],
  [17, "ABCDRecord", 0],
  [18, "ABCDAbstractGroup", 17],
  [19, "ABCDGroup", 18],
  [22, "ABCDContact", 17],
  [23, "ABCDSubscribedContact", 22],
  [24, "ABCDInfo", 17],
  [25, "CNCDContainer", 17],
];

/** The columns a card's phone numbers and e-mail addresses both start with (ZOWNER is the card's Z_PK). */
const CARD_VALUE_COLUMNS: readonly (readonly [string, string])[] = [
  ["Z_PK", "INTEGER PRIMARY KEY"],
  ["Z_ENT", "INTEGER"],
  ["Z_OPT", "INTEGER"],
  ["ZISPRIMARY", "INTEGER"],
  ["ZORDERINGINDEX", "INTEGER"],
  ["ZOWNER", "INTEGER"],
  ["Z22_OWNER", "INTEGER"],
];

export const TABLES: Record<string, readonly (readonly [string, string])[]> = {
  ZABCDRECORD: [
    ["Z_PK", "INTEGER PRIMARY KEY"],
    ["Z_ENT", "INTEGER"],
    ["Z_OPT", "INTEGER"],
    ["ZDISPLAYFLAGS", "INTEGER"],
    ["ZCONTAINER", "INTEGER"],
    ["ZPREFERREDFORLINKNAME", "INTEGER"],
    ["ZCONTAINER1", "INTEGER"],
    ["ZCONTAINERWHERECONTACTISME", "INTEGER"],
    ["ZCREATIONDATE", "TIMESTAMP"],
    ["ZMODIFICATIONDATE", "TIMESTAMP"],
    ["ZUNIQUEID", "VARCHAR"],
    ["ZNAME", "VARCHAR"],
    ["ZFIRSTNAME", "VARCHAR"],
    ["ZLASTNAME", "VARCHAR"],
    ["ZLINKID", "VARCHAR"],
    ["ZMIDDLENAME", "VARCHAR"],
    ["ZNICKNAME", "VARCHAR"],
    ["ZORGANIZATION", "VARCHAR"],
  ],
  ZABCDPHONENUMBER: [
    ...CARD_VALUE_COLUMNS,
    ["ZCOUNTRYCODE", "VARCHAR"],
    ["ZFULLNUMBER", "VARCHAR"],
    ["ZLABEL", "VARCHAR"],
    ["ZLASTFOURDIGITS", "VARCHAR"],
    ["ZUNIQUEID", "VARCHAR"],
  ],
  ZABCDEMAILADDRESS: [
    ...CARD_VALUE_COLUMNS,
    ["ZADDRESS", "VARCHAR"],
    ["ZADDRESSNORMALIZED", "VARCHAR"],
    ["ZLABEL", "VARCHAR"],
    ["ZUNIQUEID", "VARCHAR"],
  ],
};

export function tableColumns(db: Database, table: string): Set<string> {
  return new Set(
    db
      .query<{ name: string }, []>(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name),
  );
}

export function createTables(
  db: Database,
  has: Map<string, Set<string>>,
  omit: ReadonlySet<string>,
  ent: ((name: string) => number) | null,
): void {
  for (const [table, cols] of Object.entries(TABLES)) {
    const kept = cols.filter(([c]) => c === "Z_PK" || c === "ZOWNER" || !omit.has(c));
    has.set(table, new Set(kept.map(([c]) => c)));
    db.run(`CREATE TABLE ${table} (${kept.map(([c, t]) => `${c} ${t}`).join(", ")})`);
  }
  if (ent === null) return;
  db.run(
    "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
  );
  for (const [, name, parent] of ENTITIES)
    db.run("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, 0)", [ent(name), name, parent]);
}

/**
 * Entity numbers by name: those of an existing file's Z_PRIMARYKEY, else the macOS 26 model's with
 * ABCDContact at `contactEntity`.
 */
export function entityNumbers(existing: Database | null, contactEntity: number): (name: string) => number {
  const stored = new Map<string, number>();
  if (existing !== null && tableColumns(existing, "Z_PRIMARYKEY").size > 0)
    for (const r of existing
      .query<{ e: number; n: string }, []>("SELECT Z_ENT AS e, Z_NAME AS n FROM Z_PRIMARYKEY")
      .all())
      stored.set(r.n, r.e);
  return (name) =>
    stored.get(name) ??
    (name === "ABCDContact" ? contactEntity : (ENTITIES.find((e) => e[1] === name)?.[0] ?? 0));
}
