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

/** Order of a card's values as Contacts lists them: primary first, then its ordering index. */
function valueOrder(c: Columns): string {
  return [
    "ZOWNER",
    c.has("ZISPRIMARY") ? "ZISPRIMARY DESC" : "",
    c.has("ZORDERINGINDEX") ? "ZORDERINGINDEX" : "",
  ]
    .concat(c.has("Z_PK") ? ["Z_PK"] : [])
    .filter((s) => s !== "")
    .join(", ");
}

/** Phone numbers by owner card. Null without ZOWNER or ZFULLNUMBER. */
export function phoneQuery(phone: Columns): string | null {
  if (!phone.has("ZOWNER") || !phone.has("ZFULLNUMBER")) return null;
  return `SELECT ZOWNER AS owner, ZFULLNUMBER AS number, ${col(phone, "ZCOUNTRYCODE", "country")} FROM ZABCDPHONENUMBER WHERE ZOWNER IS NOT NULL AND ZFULLNUMBER IS NOT NULL ORDER BY ${valueOrder(phone)}`;
}

/** E-mail addresses by owner card (ZADDRESS as typed, else ZADDRESSNORMALIZED). Null without either. */
export function emailQuery(email: Columns): string | null {
  const parts = ["ZADDRESS", "ZADDRESSNORMALIZED"].filter((c) => email.has(c));
  if (!email.has("ZOWNER") || parts.length === 0) return null;
  const address = parts.length === 1 ? parts[0] : `COALESCE(${parts.join(", ")})`;
  return `SELECT ZOWNER AS owner, ${address} AS address FROM ZABCDEMAILADDRESS WHERE ZOWNER IS NOT NULL AND ${address} IS NOT NULL ORDER BY ${valueOrder(email)}`;
}
