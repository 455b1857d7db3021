import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import {
  BUSY_TIMEOUT_MS,
  openDatabase,
  openDatabaseReadOnly,
  StoreVersionError,
} from "../../src/store/open.ts";
import { openStore, openStoreReadOnly } from "../../src/store/store.ts";
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

describe("opening the state database read-only (operator commands)", () => {
  test("a missing file is none, and nothing is created", () => {
    const dir = tempDir();
    expect(openStoreReadOnly(join(dir, "gw.db"))).toBeNull();
    expect(existsSync(join(dir, "gw.db"))).toBe(false);
  });

  test("reads what gw serve wrote, refuses to write, and sets the store's busy timeout", () => {
    const path = join(tempDir(), "gw.db");
    const writer = openStore(path);
    writer.cursors.set("device_messenger", "42", 1, null);
    const reader = openStoreReadOnly(path);
    try {
      expect(reader?.cursors.get("device_messenger")?.position).toBe("42");
      expect(() => reader?.cursors.set("device_messenger", "43", 2, null)).toThrow(/readonly/i);
      expect(writer.cursors.get("device_messenger")?.position).toBe("42");
    } finally {
      reader?.close();
      writer.close();
    }
    const raw = openDatabaseReadOnly(path);
    expect(raw?.query("PRAGMA busy_timeout").get()).toEqual({ timeout: BUSY_TIMEOUT_MS });
    raw?.close();
  });

  test("never migrates: an older schema and a newer one are refused, the file left as it was", () => {
    const older = join(tempDir(), "gw.db");
    const db = new Database(older, { create: true });
    db.run(MIGRATIONS[0] as string);
    db.run("PRAGMA user_version = 1");
    db.close();
    expect(() => openStoreReadOnly(older)).toThrow(/older gw; start gw serve once/);
    const check = new Database(older, { readonly: true });
    expect(check.query("PRAGMA user_version").get()).toEqual({ user_version: 1 });
    check.close();

    const newer = join(tempDir(), "gw.db");
    openStore(newer).close();
    const bump = new Database(newer);
    bump.run(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
    bump.close();
    expect(() => openStoreReadOnly(newer)).toThrow(StoreVersionError);
  });
});
