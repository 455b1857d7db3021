/**
 * The WAL is copied into the database between writes, not inside them: a commit past SQLite's default
 * threshold (1,000 pages) leaves the database file as it was, and once the store has been idle for
 * IDLE_MS a checkpoint copies it.
 */
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { CAP_PAGES } from "../../src/store/checkpoints.ts";
import { openStore } from "../../src/store/store.ts";
import { waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

test("a commit never checkpoints below the cap; an idle store checkpoints on its own", async () => {
  const path = join(tempDir(), "gw.db");
  const store = openStore(path);
  try {
    expect(store.db.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: CAP_PAGES });
    const before = statSync(path).size;
    const put = store.db.prepare(
      "INSERT INTO connector_cursors (source, position, updated_at) VALUES (?1, ?2, 0)",
    );
    const blob = "x".repeat(3000);
    // One commit of about 1,500 pages: past the default threshold, under the cap.
    store.transaction(() => {
      for (let i = 0; i < 1500; i++) put.run(`source-${i}`, blob);
    });
    expect(statSync(path).size).toBe(before);
    await waitFor(() => (statSync(path).size > before ? true : undefined), "the idle checkpoint");
    expect(statSync(path).size).toBeGreaterThan(before + 1500 * 3000);
  } finally {
    store.close();
  }
});
