/**
 * A long iMessage catch-up never blocks `gw serve`: it listens before reading the backlog, answers
 * /healthz (with the rows still behind) and the API while it reads, and stops on SIGTERM promptly with
 * its cursor consistent (every row at or below it stored once, none above it); a restart finishes.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { chatDbIn, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { freePort, isolatedEnv, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { ALLOWLIST } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

const BACKLOG = 25_000;

test(`a ${BACKLOG}-row backlog: served while catching up, SIGTERM stops it consistently`, async () => {
  const dir = tempDir();
  const chat = chatDbIn(dir);
  const env = isolatedEnv(dir, { GW_BIND_PORT: String(freePort()), GW_CHAT_DB_PATH: chat.path });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const port = Number(env.GW_BIND_PORT);
  const stored = () => {
    const db = new Database(env.GW_DB_PATH as string, { readonly: true });
    try {
      const cursor = Number(
        (
          db.query("SELECT position FROM connector_cursors WHERE source = 'device_messenger'").get() as {
            position: string;
          }
        ).position,
      );
      const n = db.query("SELECT COUNT(*) AS n, COUNT(DISTINCT platform_id) AS d FROM messages").get() as {
        n: number;
        d: number;
      };
      return { cursor, ...n };
    } finally {
      db.close();
    }
  };

  // First start places the cursor at the end; then a backlog arrives while gw is stopped.
  let gw = spawnGw(["serve"], env);
  await waitForHealth(port);
  gw.proc.kill("SIGTERM");
  expect(await gw.exited).toBe(0);
  const first = chat.writer.maxRowid();
  for (let done = 0; done < BACKLOG; done += 5_000)
    chat.writer.db.transaction(() => {
      for (let i = done; i < done + 5_000; i++)
        chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `m${i}` });
    })();

  gw = spawnGw(["serve"], env);
  const health = await waitForHealth(port, 5_000);
  const detail = (health as { connectors: { device_messenger: { detail: string } } }).connectors
    .device_messenger.detail;
  const unread = await fetch(`http://127.0.0.1:${port}/messages/unread?limit=5`, {
    headers: { authorization: `Bearer ${env.GW_BEARER_TOKEN}`, "x-agent-id": "a" },
  });
  expect(unread.status).toBe(200);
  // Answered while the backlog was still being read.
  expect(detail).toMatch(/rows behind|Up to date/);
  expect(stored().n).toBeLessThan(BACKLOG);

  await waitFor(() => (stored().n > 2_000 ? true : undefined), "the catch-up to be under way");
  const t0 = performance.now();
  gw.proc.kill("SIGTERM");
  expect(await gw.exited).toBe(0);
  expect(performance.now() - t0).toBeLessThan(2_000);
  const mid = stored();
  expect(mid.n).toBe(mid.cursor - first);
  expect(mid.d).toBe(mid.n);
  expect(mid.n).toBeLessThan(BACKLOG);

  gw = spawnGw(["serve"], env);
  try {
    await waitFor(() => (stored().n === BACKLOG ? true : undefined), "the rest of the backlog", 30_000);
    expect(stored()).toEqual({ cursor: first + BACKLOG, n: BACKLOG, d: BACKLOG });
  } finally {
    gw.proc.kill("SIGTERM");
    await gw.exited;
  }
}, 60_000);
