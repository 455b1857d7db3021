/**
 * Kill -9 of a process in the middle of ingesting, many times over: after every cycle, every source
 * row at or below the stored cursor is stored exactly once, nothing above it is, every allowed message
 * has exactly one delivery row, and the database passes integrity_check. Restarting resumes from the
 * cursor until all rows are in.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

const ROWS = 6000;
const CYCLES = 60;

function invariants(dbPath: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const cursor = Number(
      (db.query("SELECT position FROM connector_cursors").get() as { position: string } | null)?.position ??
        0,
    );
    const one = <T>(sql: string) => db.query(sql).get() as T;
    const stored = one<{ n: number; max: number | null; distinct_ids: number }>(
      "SELECT COUNT(*) AS n, MAX(CAST(substr(platform_id, 5) AS INTEGER)) AS max, COUNT(DISTINCT platform_id) AS distinct_ids FROM messages",
    );
    const allowed = one<{ n: number }>(
      "SELECT COUNT(*) AS n FROM messages WHERE allowlist_status = 'allowed'",
    ).n;
    const deliveries = one<{ n: number; distinct_msgs: number }>(
      "SELECT COUNT(*) AS n, COUNT(DISTINCT message_id) AS distinct_msgs FROM webhook_deliveries",
    );
    expect(one<{ integrity_check: string }>("PRAGMA integrity_check").integrity_check).toBe("ok");
    expect(stored.n).toBe(cursor);
    expect(stored.distinct_ids).toBe(cursor);
    expect(stored.max ?? 0).toBe(cursor);
    expect(allowed).toBe(cursor - Math.floor(cursor / 3));
    expect(deliveries.n).toBe(allowed);
    expect(deliveries.distinct_msgs).toBe(allowed);
    return cursor;
  } finally {
    db.close();
  }
}

test(`kill -9 during ingest, ${CYCLES} cycles: nothing lost, nothing duplicated`, async () => {
  const dbPath = join(tempDir(), "gw.db");
  const script = join(ROOT, "test/fakes/ingest-loop.ts");
  let killed = 0;
  let previous = 0;
  for (let cycle = 0; cycle < CYCLES; cycle++) {
    const run = Bun.spawn([process.execPath, script], {
      env: { PATH: process.env.PATH ?? "", GW_DB_PATH: dbPath, GW_TEST_ROWS: String(ROWS) },
      stdout: "pipe",
    });
    // Wait until it is ingesting, then kill it at a random instant (the random delay is the point).
    await run.stdout.getReader().read();
    await Bun.sleep(Math.random() * 40);
    run.kill("SIGKILL");
    const code = await run.exited;
    if (code !== 0) killed += 1;
    const cursor = invariants(dbPath);
    expect(cursor).toBeGreaterThanOrEqual(previous);
    previous = cursor;
  }
  const finish = Bun.spawn([process.execPath, script], {
    env: { PATH: process.env.PATH ?? "", GW_DB_PATH: dbPath, GW_TEST_ROWS: String(ROWS) },
    stdout: "pipe",
  });
  expect(await finish.exited).toBe(0);
  expect(invariants(dbPath)).toBe(ROWS);
  expect(killed).toBeGreaterThan(CYCLES / 2);
}, 120_000);
