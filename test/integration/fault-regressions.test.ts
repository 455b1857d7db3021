/**
 * Regressions found by the "faults survived" runs (test/evidence/faults/): a chat.db locked by another
 * program froze the whole process for the 5 s busy timeout and /healthz answered 500; a failed commit
 * (disk full) was read again only at the 5 s forced read, not at the next poll; a log file that cannot
 * be written ended the process; and webhook attempts the store could not record were posted again in
 * a loop. Each test fails on the code before its fix.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync, renameSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { systemClock } from "../../src/core/ports.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { createLogger, currentLogFile } from "../../src/log/logger.ts";
import type { DeliveryRow } from "../../src/store/deliveries.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { deviceService, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, inbound, testService } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

type Health = { connectors: { device_messenger: { state: string; detail: string } } };

const stored = (t: Awaited<ReturnType<typeof deviceService>>, text: string) =>
  t.svc.store.db.query("SELECT COUNT(*) AS n FROM messages WHERE text = ?1").get(text) as { n: number };

test("a chat.db locked by another program: /healthz answers at once, degraded with the reason; reading resumes after", async () => {
  const t = await deviceService();
  // Swap in a rollback-journal copy (a WAL reader is never blocked by a writer's lock).
  t.chat.writer.close();
  const copy = join(t.dir, "copy.db");
  const src = new Database(t.chat.path);
  src.run(`VACUUM INTO '${copy}'`);
  src.close();
  const c = new Database(copy);
  c.run("PRAGMA journal_mode = DELETE");
  c.close();
  for (const suffix of ["-wal", "-shm"]) rmSync(`${t.chat.path}${suffix}`, { force: true });
  renameSync(copy, t.chat.path);
  await waitFor(
    () => (t.log.entries.some((e) => e.msg === "chat.db was replaced; reopening it") ? true : undefined),
    "the copy reopened",
  );
  const locker = new Database(t.chat.path);
  locker.run("BEGIN EXCLUSIVE");
  const health = async () => {
    const t0 = performance.now();
    const res = await t.request("GET", "/healthz");
    return { ms: performance.now() - t0, status: res.status, body: (await res.json()) as Health };
  };
  let h = await health();
  const deadline = Date.now() + 3_000;
  while (h.body.connectors.device_messenger.state !== "degraded" && Date.now() < deadline) {
    expect(h.status).toBe(200);
    expect(h.ms).toBeLessThan(1_000);
    await Bun.sleep(50);
    h = await health();
  }
  expect(h.status).toBe(200);
  expect(h.ms).toBeLessThan(1_000);
  expect(h.body.connectors.device_messenger).toMatchObject({
    state: "degraded",
    detail: expect.stringContaining("is locked by another program"),
  });
  locker.run("COMMIT");
  locker.close();
  const w = openChatDbWriter(t.chat.path);
  w.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "after the lock" });
  w.close();
  await waitFor(() => (stored(t, "after the lock").n === 1 ? true : undefined), "the row after the lock");
  expect((await health()).body.connectors.device_messenger.state).toBe("ok");
});

test("a commit the store refused is read again at the next poll, and the cursor never passed it", async () => {
  const t = await deviceService();
  const before = t.svc.store.cursors.get("device_messenger")?.position;
  // The store refuses every new message, as a full disk would.
  t.svc.store.db.run(
    "CREATE TEMP TRIGGER refuse_messages BEFORE INSERT ON main.messages BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
  );
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "while full" });
  await waitFor(
    () => (t.log.entries.some((e) => e.msg.startsWith("reading chat.db failed")) ? true : undefined),
    "a refused commit",
  );
  expect(t.svc.store.cursors.get("device_messenger")?.position).toBe(before as string);
  t.svc.store.db.run("DROP TRIGGER temp.refuse_messages");
  const t0 = performance.now();
  // The poll interval is 50 ms; the forced read that used to pick it up came only after 5 s.
  await waitFor(() => (stored(t, "while full").n === 1 ? true : undefined), "the row stored", 1_500);
  expect(performance.now() - t0).toBeLessThan(1_500);
  expect(Number(t.svc.store.cursors.get("device_messenger")?.position)).toBeGreaterThan(Number(before));
});

test.skipIf(!existsSync("/dev/full"))(
  "a log file that cannot be written (ENOSPC) does not end the process; the failure is reported on stderr",
  async () => {
    const dir = tempDir();
    const first = await createLogger({ dir, level: "info", secrets: [], stderr: { write: () => true } });
    first.info("opened");
    const file = currentLogFile(dir) as string;
    unlinkSync(file);
    symlinkSync("/dev/full", file);
    const stderr: string[] = [];
    const log = await createLogger({
      dir,
      level: "info",
      secrets: [],
      stderrLevel: "silent",
      stderr: { write: (s: string) => stderr.push(s) },
    });
    for (let i = 0; i < 200; i++) log.info({ i }, "a line the disk cannot take");
    await Bun.sleep(20);
    expect(stderr).toHaveLength(1);
    expect(JSON.parse(stderr[0] as string)).toMatchObject({
      level: 50,
      err: expect.stringContaining("ENOSPC"),
      msg: "the log file cannot be written; lines are kept and written once it can be",
    });
  },
);

test("webhook attempts the store cannot record are not posted again in a loop; they are recorded once it can", async () => {
  const sink = webhookSink(() => 204);
  try {
    const t = await testService({
      clock: systemClock,
      env: {
        GW_WEBHOOK_URL: sink.url,
        GW_WEBHOOK_SECRET: "regression-secret-0123456789",
        GW_WEBHOOK_RETRY_DELAYS_MS: "40,40,40,40",
      },
    });
    t.svc.store.db.run(
      "CREATE TEMP TRIGGER refuse_attempts BEFORE UPDATE ON main.webhook_deliveries BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    const [id] = t.seed([inbound()]) as [string];
    await waitFor(() => (sink.hits.length >= 1 ? true : undefined), "the first attempt");
    await Bun.sleep(500);
    expect(sink.hits).toHaveLength(1);
    t.svc.store.db.run("DROP TRIGGER temp.refuse_attempts");
    const d = await waitFor(() => {
      const row = t.svc.store.deliveries.forMessage(id) as DeliveryRow;
      return row.status === "pending" ? undefined : row;
    }, "the attempt recorded");
    expect(d).toMatchObject({ status: "delivered", attempt_count: 1, last_code: 204 });
    expect(sink.hits).toHaveLength(1);
    const unread = await t.request("GET", "/messages/unread", { headers: AGENT });
    expect(unread.status).toBe(200);
  } finally {
    sink.stop();
  }
});
