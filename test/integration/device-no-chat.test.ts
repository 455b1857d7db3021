/**
 * Rows that never join a chat (issue hardening, item 6): the reader holds for the join up to
 * NO_CHAT_WAIT_MS, then skips the row; the rows it remembered while waiting are forgotten once the cursor
 * passes them, so a chat.db full of such rows cannot grow the reader's memory. A row whose join lands
 * late is delivered. Real chat.db (Messages' schema), real store and ingest, a manual clock.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { createPoller, NO_CHAT_WAIT_MS } from "../../src/connectors/device-messenger/poller.ts";
import { NO_NAMES } from "../../src/core/names.ts";
import { chatDbIn, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { storeWithIngest } from "../helpers/messages.ts";

test("rows without a chat are held, then skipped and forgotten; a late join is delivered", async () => {
  const t = storeWithIngest({ webhooks: false });
  const chat = chatDbIn(t.dir);
  const poller = createPoller(
    {
      chatDbPath: chat.path,
      attachmentDir: join(t.dir, "attachments"),
      attachmentMaxBytes: 1 << 20,
      homeDir: t.dir,
      backfillFenceMs: 0,
      attachmentWaitMs: 60_000,
      cursors: t.store.cursors,
      ids: t.ids,
      clock: t.clock,
      log: t.log,
      names: NO_NAMES,
    },
    t.ingest,
  );
  poller.open();
  const orphans = Array.from({ length: 50 }, (_, i) =>
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `orphan ${i}`, joinChat: false }),
  );
  await poller.tick();
  expect(poller.status().waitingForChat).toBe(50);
  expect(poller.status().cursor).toBe((orphans[0]?.rowid ?? 0) - 1);

  t.clock.advance(NO_CHAT_WAIT_MS);
  const late = chat.writer.message({
    chatGuid: FRIEND_CHAT,
    from: FRIEND,
    text: "late join",
    joinChat: false,
  });
  await poller.tick();
  // The 50 orphans are skipped and forgotten; the new row waits for its join.
  expect(poller.status().cursor).toBe(late.rowid - 1);
  expect(poller.status().waitingForChat).toBe(1);
  expect(t.log.entries.filter((e) => e.msg === "chat.db row never joined a chat; skipped")).toHaveLength(50);

  chat.writer.joinChat(late.rowid, FRIEND_CHAT);
  await poller.tick();
  expect(poller.status()).toMatchObject({ cursor: late.rowid, waitingForChat: 0 });
  const texts = t.store.db.query("SELECT text FROM messages").all() as { text: string }[];
  expect(texts.map((r) => r.text)).toEqual(["late join"]);
  poller.close();
});
