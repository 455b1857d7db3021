import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { openDatabase, StoreVersionError } from "../../src/store/open.ts";
import { openStore } from "../../src/store/store.ts";
import { inbound, storeWithIngest } from "../helpers/messages.ts";
import { tempDir } from "../helpers/temp.ts";

const mode = (p: string) => statSync(p).mode & 0o777;

describe("opening the state database", () => {
  test("creates its directory 0700 and the database, WAL and SHM files 0600 even under umask 022", () => {
    const dir = join(tempDir(), "nested/data");
    const old = process.umask(0o022);
    try {
      const store = openStore(join(dir, "gw.db"));
      store.db.run(
        "INSERT INTO connector_cursors (source, position, updated_at) VALUES ('community_chat', '1', 0)",
      );
      expect(mode(dir)).toBe(0o700);
      for (const f of ["gw.db", "gw.db-wal", "gw.db-shm"]) expect(mode(join(dir, f))).toBe(0o600);
      store.close();
    } finally {
      process.umask(old);
    }
  });

  test("tightens an existing database file to 0600", () => {
    const path = join(tempDir(), "gw.db");
    writeFileSync(path, "", { mode: 0o644 });
    openStore(path).close();
    expect(mode(path)).toBe(0o600);
  });

  test("sets the pragmas every connection needs", () => {
    const store = openStore(join(tempDir(), "gw.db"));
    const pragma = (name: string) => Object.values(store.db.query(`PRAGMA ${name}`).get() as object)[0];
    expect(pragma("journal_mode")).toBe("wal");
    expect(pragma("busy_timeout")).toBe(5000);
    expect(pragma("foreign_keys")).toBe(1);
    expect(pragma("synchronous")).toBe(2); // FULL
    expect(pragma("user_version")).toBe(MIGRATIONS.length);
    store.close();
  });

  test("migrations are applied once; reopening keeps the data", () => {
    const path = join(tempDir(), "gw.db");
    const t1 = openStore(path);
    t1.db.run(
      "INSERT INTO connector_cursors (source, position, updated_at) VALUES ('device_messenger', '42', 1)",
    );
    t1.close();
    const t2 = openStore(path);
    expect(t2.cursors.get("device_messenger")?.position).toBe("42");
    t2.close();
  });

  test("a database from a newer gw is refused with a clear error", () => {
    const path = join(tempDir(), "gw.db");
    const db = new Database(path);
    db.run(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => openDatabase(path)).toThrow(StoreVersionError);
    expect(() => openDatabase(path)).toThrow(/newer than this gw knows/);
  });

  test("integrity and foreign keys hold after a realistic workload", () => {
    const t = storeWithIngest();
    for (let i = 0; i < 50; i++) {
      const stranger = i % 3 === 0;
      t.ingest({
        source: "device_messenger",
        messages: [inbound(stranger ? { sender: { id: "+15555550999", displayName: "?" } } : {})],
        cursor: String(i),
      });
    }
    expect(t.store.db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    expect(t.store.db.query("PRAGMA foreign_key_check").all()).toEqual([]);
  });
});
