/**
 * kill -9 of `gw serve` while iMessages wait for their attachments: the pending list lives with the
 * cursor in gw.db, so after a restart every waiting message is delivered, once, with its file, and the
 * messages of its chat that came after it follow it.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import { chatDbIn, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { freePort, isolatedEnv, spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { ALLOWLIST } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

test("kill -9 while messages wait for attachments: none is lost, none doubled", async () => {
  const dir = tempDir();
  const chat = chatDbIn(dir);
  const env = isolatedEnv(dir, {
    GW_BIND_PORT: String(freePort()),
    GW_CHAT_DB_PATH: chat.path,
    GW_DEVICE_POLL_INTERVAL_MS: "50",
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, ALLOWLIST);
  const port = Number(env.GW_BIND_PORT);
  const unread = async () =>
    (
      (await (
        await fetch(`http://127.0.0.1:${port}/messages/unread`, {
          headers: { authorization: `Bearer ${env.GW_BEARER_TOKEN}`, "x-agent-id": "a" },
        })
      ).json()) as { messages: Envelope[] }
    ).messages;
  const pendingInStore = () => {
    const db = new Database(env.GW_DB_PATH as string, { readonly: true });
    try {
      const row = db.query("SELECT state FROM connector_cursors WHERE source = 'device_messenger'").get() as {
        state: string | null;
      } | null;
      return (JSON.parse(row?.state ?? "{}").pending ?? []).length as number;
    } finally {
      db.close();
    }
  };

  let gw = spawnGw(["serve"], env);
  await waitForHealth(port);
  const { rowid } = chat.writer.message({
    chatGuid: FRIEND_CHAT,
    from: FRIEND,
    text: "photo",
    placeholders: 1,
  });
  chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "after it" });
  await waitFor(() => (pendingInStore() === 2 ? true : undefined), "two pending messages in gw.db");
  gw.proc.kill("SIGKILL");
  await gw.exited;

  const rel = "Library/Messages/Attachments/aa/GUID/IMG.jpg";
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), "JPEG");
  chat.writer.attach(rowid, { path: `~/${rel}` });

  gw = spawnGw(["serve"], env);
  try {
    await waitForHealth(port);
    const list = await waitFor(async () => {
      const l = await unread();
      return l.length === 2 ? l : undefined;
    }, "both messages after the restart");
    expect(list.map((m) => [m.text, m.attachments.length])).toEqual([
      ["photo", 1],
      ["after it", 0],
    ]);
    expect(pendingInStore()).toBe(0);
    await Bun.sleep(300);
    expect(await unread()).toHaveLength(2);
  } finally {
    gw.proc.kill("SIGTERM");
    await gw.exited;
  }
});
