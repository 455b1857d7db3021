/**
 * Rows written the way each macOS release's chat.db can take them (the demo's and the tests' writer,
 * never a real chat.db): an insert or update names only the columns the table has (`PRAGMA table_info`,
 * read once per table), so one writer serves Big Sur's 74 `message` columns and Tahoe's 95. A column a
 * release lacks is left out, as Messages of that release never wrote it.
 */
import type { Database } from "bun:sqlite";

export type Value = string | number | bigint | Uint8Array | null;
export type Values = Record<string, Value>;

export function createColumnWriter(db: Database) {
  const known = new Map<string, ReadonlySet<string>>();
  const columnsOf = (table: string): ReadonlySet<string> => {
    let cols = known.get(table);
    if (!cols) {
      cols = new Set(
        db
          .query<{ name: string }, []>(`PRAGMA table_info(${table})`)
          .all()
          .map((c) => c.name),
      );
      known.set(table, cols);
    }
    return cols;
  };
  const present = (table: string, values: Values) => {
    const cols = columnsOf(table);
    return Object.entries(values).filter(([c]) => cols.has(c));
  };
  return {
    /** Whether the table has this column. */
    has: (table: string, column: string): boolean => columnsOf(table).has(column),
    /** Inserts the values whose columns exist; the new ROWID. */
    insert(table: string, values: Values, or: "" | "OR IGNORE" = ""): number {
      const kept = present(table, values);
      const sql = `INSERT ${or} INTO ${table} (${kept.map(([c]) => c).join(", ")}) VALUES (${kept.map(() => "?").join(", ")})`;
      return Number(db.query(sql).run(...kept.map(([, v]) => v)).lastInsertRowid);
    },
    /** Sets the values whose columns exist on one row (by ROWID); false when none of them exists. */
    update(table: string, rowid: number, values: Values): boolean {
      const kept = present(table, values);
      if (kept.length === 0) return false;
      const sql = `UPDATE ${table} SET ${kept.map(([c]) => `${c} = ?`).join(", ")} WHERE ROWID = ?`;
      db.query(sql).run(...kept.map(([, v]) => v), rowid);
      return true;
    },
  };
}

export type ColumnWriter = ReturnType<typeof createColumnWriter>;
