/**
 * The Contacts reader's SELECTs (src/contacts/queries.ts) are built from the columns present: a missing
 * column reads as NULL, a missing essential gives no query, and every built query runs on a table that has
 * exactly those columns; a card's values are ordered in code exactly as SQLite's ORDER BY would.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  compareValues,
  emailQuery,
  entityQuery,
  phoneQuery,
  recordQuery,
} from "../../src/contacts/queries.ts";

const cols = (...names: string[]) => new Set(names);
const RECORD_FULL = cols(
  "Z_PK",
  "Z_ENT",
  "ZFIRSTNAME",
  "ZLASTNAME",
  "ZNICKNAME",
  "ZORGANIZATION",
  "ZDISPLAYFLAGS",
  "ZLINKID",
  "ZPREFERREDFORLINKNAME",
);

/** Runs `sql` against a table made of exactly `columns`. */
function runs(table: string, columns: Set<string>, sql: string): unknown[] {
  const db = new Database(":memory:");
  db.run(`CREATE TABLE ${table} (${[...columns].join(", ")})`);
  try {
    return db.query(sql).all();
  } finally {
    db.close();
  }
}

describe("entityQuery", () => {
  test("looks the contact entities up by name", () => {
    const sql = entityQuery(cols("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX"));
    expect(sql).toContain("'ABCDContact', 'ABCDSubscribedContact'");
    expect(runs("Z_PRIMARYKEY", cols("Z_ENT", "Z_NAME"), sql as string)).toEqual([]);
  });

  test("no usable Z_PRIMARYKEY, no query", () => {
    expect(entityQuery(cols())).toBeNull();
    expect(entityQuery(cols("Z_ENT"))).toBeNull();
  });
});

describe("recordQuery", () => {
  test("every column present: named, filtered to the contact entities", () => {
    const sql = recordQuery(RECORD_FULL, [22, 23]) as string;
    expect(sql).toContain("WHERE Z_ENT IN (22, 23)");
    expect(sql).toContain("ZLINKID AS link_id");
    expect(runs("ZABCDRECORD", RECORD_FULL, sql)).toEqual([]);
  });

  test("missing columns read as NULL; no Z_ENT or no entities: every row", () => {
    const sql = recordQuery(cols("Z_PK", "ZFIRSTNAME"), [22]) as string;
    expect(sql).toContain("NULL AS link_id");
    expect(sql).toContain("NULL AS last_name");
    expect(sql).not.toContain("WHERE");
    expect(recordQuery(RECORD_FULL, null)).not.toContain("WHERE");
    expect(runs("ZABCDRECORD", cols("Z_PK", "ZFIRSTNAME"), sql)).toEqual([]);
  });

  test("an empty entity list matches nothing rather than everything", () => {
    expect(recordQuery(RECORD_FULL, [])).toContain("Z_ENT IN (NULL)");
  });

  test("no Z_PK, no query", () => {
    expect(recordQuery(cols("ZFIRSTNAME"), null)).toBeNull();
  });
});

describe("phoneQuery and emailQuery", () => {
  test("the order columns are selected, not sorted in SQL (one unsliceable step); the reader orders them", () => {
    const phone = cols("Z_PK", "ZOWNER", "ZFULLNUMBER", "ZCOUNTRYCODE", "ZISPRIMARY", "ZORDERINGINDEX");
    const sql = phoneQuery(phone) as string;
    expect(sql).toContain("ZISPRIMARY AS is_primary, ZORDERINGINDEX AS ordering, Z_PK AS pk");
    expect(sql).not.toContain("ORDER BY");
    expect(sql).toContain("ZCOUNTRYCODE AS country");
    expect(runs("ZABCDPHONENUMBER", phone, sql)).toEqual([]);
  });

  test("an older table: what is missing reads as NULL", () => {
    const sql = phoneQuery(cols("ZOWNER", "ZFULLNUMBER")) as string;
    expect(sql).toContain("NULL AS country, NULL AS is_primary, NULL AS ordering, NULL AS pk");
    expect(runs("ZABCDPHONENUMBER", cols("ZOWNER", "ZFULLNUMBER"), sql)).toEqual([]);
    expect(phoneQuery(cols("ZOWNER"))).toBeNull();
    expect(phoneQuery(cols("ZFULLNUMBER"))).toBeNull();
  });

  test("e-mail: the address as typed, else the normalised one", () => {
    const both = cols("ZOWNER", "ZADDRESS", "ZADDRESSNORMALIZED");
    expect(emailQuery(both)).toContain("COALESCE(ZADDRESS, ZADDRESSNORMALIZED)");
    expect(runs("ZABCDEMAILADDRESS", both, emailQuery(both) as string)).toEqual([]);
    expect(emailQuery(cols("ZOWNER", "ZADDRESSNORMALIZED"))).toContain("ZADDRESSNORMALIZED AS address");
    expect(emailQuery(cols("ZOWNER"))).toBeNull();
    expect(emailQuery(cols("ZADDRESS"))).toBeNull();
  });
});

describe("compareValues", () => {
  test("sorts a card's values as ORDER BY ZISPRIMARY DESC, ZORDERINGINDEX, Z_PK does in SQLite", () => {
    const rows = [
      [1, null, null, 7],
      [2, 0, 2, 3],
      [3, 1, 5, 9],
      [4, 0, null, 8],
      [5, 0, 2, 1],
      [6, null, 0, 2],
      [7, 1, 5, 4],
    ] as const;
    const db = new Database(":memory:");
    db.run("CREATE TABLE v (id, ZISPRIMARY, ZORDERINGINDEX, Z_PK)");
    for (const r of rows) db.run("INSERT INTO v VALUES (?, ?, ?, ?)", [...r]);
    const sqlite = db
      .query<{ id: number }, []>("SELECT id FROM v ORDER BY ZISPRIMARY DESC, ZORDERINGINDEX, Z_PK")
      .all()
      .map((r) => r.id);
    db.close();
    const ours: number[] = rows
      .map(([id, is_primary, ordering, pk]) => ({ id, is_primary, ordering, pk }))
      .sort(compareValues)
      .map((r) => r.id);
    expect(ours).toEqual(sqlite);
    expect(sqlite).toEqual([7, 3, 4, 5, 2, 1, 6]);
  });
});
