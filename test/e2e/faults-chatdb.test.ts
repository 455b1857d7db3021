/**
 * Faults survived, chat.db (test/evidence/faults/chat-db.ts): one real gw serve while chat.db is locked
 * by a writer (WAL and rollback journal), replaced, truncated and made unreadable; /healthz and the
 * API keep answering with a clear state, reading resumes after each fault, nothing is lost.
 */
import { expect, test } from "bun:test";
import { chatDbFaults } from "../evidence/faults/chat-db.ts";

test("chat.db locked, replaced, truncated, unreadable: clear health, no crash, nothing lost", async () => {
  const run = await chatDbFaults();
  expect(run.rows.filter((r) => !r.ok)).toEqual([]);
  const phase = (start: string) => run.details.phases.find((p) => p.fault.startsWith(start));
  const locked = phase("locked by a writer, rollback journal");
  expect(locked?.states).toContain("degraded");
  expect(locked?.detail).toContain("is locked by another program");
  expect(phase("unreadable: a directory")?.states).toContain("error");
  expect(phase("unreadable: a file that is not SQLite")?.detail).toContain("not a database");
  for (const p of run.details.phases) expect(p.failedRequests).toBe(0);
  expect(run.details).toMatchObject({ duplicates: 0, exitCode: 0 });
  expect(run.details.storedOnce).toBe(run.details.written);
  if (run.details.root)
    console.log(
      "faults-chatdb: running as root, chmod 000 does not deny reads: a directory and a non-SQLite file stood in",
    );
}, 60_000);
