/**
 * Regressions found by the bad-input item `chat-db-rows` (test/evidence/fuzz/chatdb.ts): chat.db rows
 * Messages never writes must not stop the iMessage reader or the API. A value of the wrong storage class
 * in a text column (a blob in message.text, handle.id, chat.guid, attachment.filename) threw in the
 * reader at every tick, so nothing after that row was ever read; a date no timestamp can hold (+Inf,
 * 1e300) was stored as is and made /messages/unread and /messages/quarantine answer 500 from then on;
 * and a future date seen first (on an empty chat.db, or at the tail a first start reads, as a "Send
 * Later" row leaves it) became the backfill fence's mark uncapped, so every later row was held back
 * as iCloud backfill. Each test fails on the code before its fix.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatDbRow } from "../../src/connectors/device-messenger/chat-db.ts";
import { FUTURE_SLACK_MS, planRead } from "../../src/connectors/device-messenger/plan.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { appleNanos } from "../../src/demo/chatdb-writer.ts";
import { chatDbRow } from "../helpers/chatdb-row.ts";
import { chatDbIn, deviceService, FRIEND, FRIEND_CHAT, STRANGER } from "../helpers/device.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

type Device = Awaited<ReturnType<typeof deviceService>>;
const utf8 = (s: string) => new TextEncoder().encode(s);

async function list(t: Device, path: string): Promise<{ status: number; messages: Envelope[] }> {
  const res = await t.request("GET", path, { headers: AGENT });
  const body = (await res.json()) as { messages?: Envelope[] };
  return { status: res.status, messages: body.messages ?? [] };
}

/** Waits until the unread list holds `text`; fails with the last answer and the reader's errors. */
async function waitForUnreadText(t: Device, text: string): Promise<Envelope[]> {
  return waitFor(async () => {
    const { status, messages } = await list(t, "/messages/unread?limit=100");
    if (status !== 200) throw new Error(`GET /messages/unread answered ${status}`);
    return messages.some((m) => m.text === text) ? messages : undefined;
  }, `"${text}" in /messages/unread`);
}

/** A message row by raw SQL, joined to the friend's chat; returns its ROWID. */
function rawMessage(t: Device, cols: Record<string, unknown>): number {
  const db = t.chat.writer.db;
  const all = {
    guid: crypto.randomUUID(),
    handle_id: t.chat.writer.handle(FRIEND),
    // Messages names the service of every message it stores.
    service: "iMessage",
    date: appleNanos(Date.now()),
    ...cols,
  };
  const names = Object.keys(all);
  const rowid = Number(
    db
      .query(`INSERT INTO message (${names.join(", ")}) VALUES (${names.map(() => "?").join(", ")})`)
      .run(...(Object.values(all) as never[])).lastInsertRowid,
  );
  const chat = db.query("SELECT ROWID AS r FROM chat WHERE guid = ?").get(FRIEND_CHAT) as { r: number };
  db.query("INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (?, ?, 0)").run(
    chat.r,
    rowid,
  );
  return rowid;
}

test("blobs in text columns (message.text, handle.id, chat.guid, attachment.filename) are read as text; the rows after them arrive", async () => {
  const t = await deviceService();
  const db = t.chat.writer.db;
  rawMessage(t, { text: utf8("hello from a blob") });
  // A handle whose id is a blob: the message is read, its sender is that id as text (not allowlisted).
  db.query("INSERT INTO handle (id, service) VALUES (?, 'SMS')").run(utf8(STRANGER));
  const blobHandle = (db.query("SELECT ROWID AS r FROM handle WHERE service = 'SMS'").get() as { r: number })
    .r;
  rawMessage(t, { text: "from a blob handle", handle_id: blobHandle });
  // A chat whose guid and identifier are blobs.
  db.query("INSERT INTO chat (guid, style, chat_identifier, service_name) VALUES (?, 45, ?, 'iMessage')").run(
    utf8(`any;-;${FRIEND}x`),
    utf8(`${FRIEND}x`),
  );
  const blobChat = (db.query("SELECT MAX(ROWID) AS r FROM chat").get() as { r: number }).r;
  const inBlobChat = rawMessage(t, { text: "in a blob chat" });
  db.query("UPDATE chat_message_join SET chat_id = ? WHERE message_id = ?").run(blobChat, inBlobChat);
  // An attachment whose filename is a blob naming a file that exists.
  const photo = join(t.dir, "photo.jpg");
  writeFileSync(photo, "jpeg");
  const withFile = rawMessage(t, { text: "\ufffcwith a photo" });
  const att = db
    .query(
      "INSERT INTO attachment (guid, original_guid, filename, transfer_state, mime_type, transfer_name) VALUES ('ATT-1', 'ATT-1', ?, 5, 'image/jpeg', 'photo.jpg')",
    )
    .run(utf8(photo));
  db.query("INSERT INTO message_attachment_join (message_id, attachment_id) VALUES (?, ?)").run(
    withFile,
    Number(att.lastInsertRowid),
  );
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "the good row after them" });

  const unread = await waitForUnreadText(t, "the good row after them");
  expect(unread.map((m) => [m.text, m.channel_id])).toEqual([
    ["hello from a blob", FRIEND],
    ["in a blob chat", `${FRIEND}x`],
    ["with a photo", FRIEND],
    ["the good row after them", FRIEND],
  ]);
  expect(unread[2]?.attachments).toHaveLength(1);
  const quarantined = await list(t, "/messages/quarantine");
  expect(quarantined.messages.map((m) => [m.text, m.sender.id])).toEqual([["from a blob handle", STRANGER]]);
  expect(t.log.entries.filter((e) => e.level === "error")).toEqual([]);
});

test("dates no timestamp can hold (+Inf, 1e300, 999999999999 s) are stamped with the read time, -1e300 is fenced; the API keeps answering", async () => {
  const t = await deviceService();
  const before = Date.now();
  rawMessage(t, { text: "dated 1e300", date: 1e300 });
  const inf = rawMessage(t, { text: "dated +Inf" });
  t.chat.writer.db.query("UPDATE message SET date = 9e999 WHERE ROWID = ?").run(inf);
  rawMessage(t, { text: "dated -1e300", date: -1e300 });
  rawMessage(t, {
    text: "dated 999999999999 s",
    date: 999_999_999_999,
    handle_id: t.chat.writer.handle(STRANGER),
  });
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "the good row after them" });

  const unread = await waitForUnreadText(t, "the good row after them");
  const after = Date.now();
  const odd = unread.filter((m) => m.text.startsWith("dated"));
  expect(odd.map((m) => m.text).sort()).toEqual(["dated +Inf", "dated 1e300"]);
  for (const m of odd) {
    const ms = Date.parse(m.timestamp);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after);
  }
  expect(odd.find((m) => m.text === "dated +Inf")?.raw.date).toBe("Inf");
  const quarantined = await list(t, "/messages/quarantine");
  expect(quarantined.status).toBe(200);
  expect(quarantined.messages.map((m) => m.text)).toEqual(["dated 999999999999 s"]);
  expect(t.log.entries.filter((e) => e.level === "error")).toEqual([]);
  expect(t.log.entries.filter((e) => e.msg.includes("date no timestamp can hold"))).toHaveLength(3);
  // Dated long before the rows read: held back as iCloud backfill, and the warning says so.
  const fenced = t.log.entries.find((e) => e.msg.includes("iCloud backfill"));
  expect(fenced?.obj).toMatchObject({ count: 1, from: "-1e+294", to: "-1e+294" });
});

test("a first row dated in 2293 on an empty chat.db does not fence the rows after it", async () => {
  const t = await deviceService();
  rawMessage(t, { text: "dated 2^63 - 1 ns", date: 2n ** 63n - 1n });
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "the good row after it" });
  const unread = await waitForUnreadText(t, "the good row after it");
  expect(unread.map((m) => m.text)).toEqual(["the good row after it", "dated 2^63 - 1 ns"]);
});

test("a first start whose tail holds a row dated a week ahead (Send Later) delivers the rows after it", async () => {
  const dir = tempDir();
  const pre = chatDbIn(dir);
  pre.writer.message({
    chatGuid: FRIEND_CHAT,
    from: null,
    isFromMe: true,
    text: "later",
    dateMs: Date.now() + 7 * 86_400_000,
  });
  pre.writer.close();
  const t = await deviceService({ dir });
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "the good row after it" });
  const unread = await waitForUnreadText(t, "the good row after it");
  expect(unread.map((m) => m.text)).toEqual(["the good row after it"]);
  expect(t.log.entries.some((e) => e.msg.includes("iCloud backfill"))).toBe(false);
});

test("planRead caps a high-water mark it is given, and one it starts from a first row, at now + FUTURE_SLACK_MS", () => {
  const now = Date.UTC(2026, 10, 24, 12);
  const row = (rowid: number, date_ms: number): ChatDbRow => chatDbRow(rowid, date_ms, { text: "x" });
  const input = (r: ChatDbRow) => ({ row: r, attachments: [], text: "x", announced: 0, ready: true });
  const base = { waiting: [], pending: [], now, fenceMs: 15 * 60_000, waitMs: 60_000 };
  for (const highWater of [null, now + 365 * 86_400_000, Number.POSITIVE_INFINITY]) {
    const plan = planRead({
      ...base,
      highWater,
      fresh: [input(row(1, 10_201_679_236_854)), input(row(2, now))],
    });
    expect(plan.deliver.map((d) => d.input.row.rowid)).toEqual([1, 2]);
    expect(plan.fenced).toEqual([]);
    expect(plan.highWater).toBe(now + FUTURE_SLACK_MS);
  }
});

test("a message joined to a missing chat and to a real one is read in the real chat (the lowest chat_id used to win, so it was skipped)", async () => {
  const t = await deviceService();
  const db = t.chat.writer.db;
  const rowid = rawMessage(t, { text: "joined twice" });
  // A join to a chat id no row holds, lower than the friend's chat.
  db.query("INSERT INTO chat_message_join (chat_id, message_id, message_date) VALUES (0, ?, 0)").run(rowid);
  rawMessage(t, { text: "the next one" });
  const unread = await waitForUnreadText(t, "the next one");
  expect(unread.map((m) => [m.text, m.channel_id])).toEqual([
    ["joined twice", FRIEND],
    ["the next one", FRIEND],
  ]);
});
