/**
 * The SELECTs the Contacts reader runs, built from the columns each table really has (pure): a column an
 * older or newer AddressBook-v22 lacks reads as NULL, a table without what a query cannot do without gives
 * no query (null), so a schema change loses a detail, never the read. Table and column names are Apple's
 * (docs/CONTACTS.md); contact rows are told from groups, containers and the ABCDInfo row by their Core
 * Data entity, looked up by name in Z_PRIMARYKEY because its numbers change between model versions.
 */

export type Columns = ReadonlySet<string>;

/** The entities whose ZABCDRECORD rows are contact cards. */
export const CONTACT_ENTITIES = ["ABCDContact", "ABCDSubscribedContact"] as const;

const col = (c: Columns, name: string, as: string) => `${c.has(name) ? name : "NULL"} AS ${as}`;

/** Z_ENT numbers of the contact entities; null when the file has no usable Z_PRIMARYKEY. */
export function entityQuery(primaryKey: Columns): string | null {
  if (!primaryKey.has("Z_ENT") || !primaryKey.has("Z_NAME")) return null;
  const names = CONTACT_ENTITIES.map((n) => `'${n}'`).join(", ");
  return `SELECT Z_ENT AS ent FROM Z_PRIMARYKEY WHERE Z_NAME IN (${names})`;
}

/**
 * The contact rows: every row of the contact entities, or — when the entities are unknown — every row
 * (groups and containers then fall out later for having no person's name). Null without Z_PK.
 */
export function recordQuery(record: Columns, entities: readonly number[] | null): string | null {
  if (!record.has("Z_PK")) return null;
  const where =
    entities !== null && record.has("Z_ENT")
      ? `WHERE Z_ENT IN (${entities.map((e) => Math.trunc(e)).join(", ") || "NULL"})`
      : "";
  return [
    "SELECT Z_PK AS pk,",
    [
      col(record, "ZFIRSTNAME", "first_name"),
      col(record, "ZLASTNAME", "last_name"),
      col(record, "ZNICKNAME", "nickname"),
      col(record, "ZORGANIZATION", "organization"),
      col(record, "ZDISPLAYFLAGS", "display_flags"),
      col(record, "ZLINKID", "link_id"),
      col(record, "ZPREFERREDFORLINKNAME", "preferred_for_link_name"),
    ].join(", "),
    `FROM ZABCDRECORD ${where} ORDER BY Z_PK`,
  ].join(" ");
}

/**
 * The columns that order a card's values as Contacts lists them (primary first, then its ordering index,
 * then Z_PK), NULL where missing. The reader sorts each card's few values itself: an ORDER BY here would
 * sort the whole table in the query's first step, one piece of work that cannot be sliced (~3 ms for
 * 5,000 rows).
 */
const orderColumns = (c: Columns) =>
  [col(c, "ZISPRIMARY", "is_primary"), col(c, "ZORDERINGINDEX", "ordering"), col(c, "Z_PK", "pk")].join(", ");

/** Phone numbers with their owner card, unordered. Null without ZOWNER or ZFULLNUMBER. */
export function phoneQuery(phone: Columns): string | null {
  if (!phone.has("ZOWNER") || !phone.has("ZFULLNUMBER")) return null;
  return `SELECT ZOWNER AS owner, ZFULLNUMBER AS number, ${col(phone, "ZCOUNTRYCODE", "country")}, ${orderColumns(phone)} FROM ZABCDPHONENUMBER WHERE ZOWNER IS NOT NULL AND ZFULLNUMBER IS NOT NULL`;
}

/** E-mail addresses with their owner card (ZADDRESS as typed, else ZADDRESSNORMALIZED), unordered. Null without either. */
export function emailQuery(email: Columns): string | null {
  const parts = ["ZADDRESS", "ZADDRESSNORMALIZED"].filter((c) => email.has(c));
  if (!email.has("ZOWNER") || parts.length === 0) return null;
  const address = parts.length === 1 ? parts[0] : `COALESCE(${parts.join(", ")})`;
  return `SELECT ZOWNER AS owner, ${address} AS address, ${orderColumns(email)} FROM ZABCDEMAILADDRESS WHERE ZOWNER IS NOT NULL AND ${address} IS NOT NULL`;
}

/** One value row's place among its card's values: primary first, then ordering index, then Z_PK (SQLite's NULL order). */
export interface ValueOrder {
  is_primary: unknown;
  ordering: unknown;
  pk: unknown;
}

const num = (v: unknown): number => (typeof v === "number" || typeof v === "bigint" ? Number(v) : -Infinity);

/** Compares two values of one card as `ORDER BY ZISPRIMARY DESC, ZORDERINGINDEX, Z_PK` would. */
export function compareValues(a: ValueOrder, b: ValueOrder): number {
  return num(b.is_primary) - num(a.is_primary) || num(a.ordering) - num(b.ordering) || num(a.pk) - num(b.pk);
}
