/**
 * The iMessage connector end to end against the real service: a chat.db written the way Messages
 * writes it, the real reader and poller, and the Messages stand-in program as GW_OSASCRIPT_PATH.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Envelope } from "../../src/core/envelope.ts";
import { openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import {
  chatDbIn,
  deviceService,
  FRIEND,
  FRIEND_CHAT,
  GROUP_CHAT,
  STRANGER,
  STRANGER_CHAT,
} from "../helpers/device.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT, AUTH } from "../helpers/service.ts";
import { tempDir } from "../helpers/temp.ts";

type List = { messages: Envelope[] };

async function unread(
  t: { request: ReturnType<typeof import("../helpers/service.ts").makeRequest> },
  q = "",
) {
  return ((await (await t.request("GET", `/messages/unread${q}`, { headers: AGENT })).json()) as List)
    .messages;
}

async function waitForUnread(t: Parameters<typeof unread>[0], count: number, q = "") {
  return waitFor(async () => {
    const m = await unread(t, q);
    return m.length >= count ? m : undefined;
  }, `${count} unread messages`);
}

const countOutbound = (t: Awaited<ReturnType<typeof deviceService>>) =>
  (
    t.svc.store.db.query("SELECT COUNT(*) AS n FROM messages WHERE direction = 'outbound'").get() as {
      n: number;
    }
  ).n;

describe("reading chat.db", () => {
  test("history before the first start is not imported; new DM and group rows arrive as envelopes", async () => {
    const dir = tempDir();
    const pre = chatDbIn(dir);
    pre.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "old history" });
    pre.writer.close();
    const t = await deviceService({ dir });
    t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "hello from a DM",
      bodyForm: "attributedBody",
    });
    t.chat.writer.message({
      chatGuid: GROUP_CHAT,
      from: FRIEND,
      text: "hello group 熄灭了 👍🏽",
      bodyForm: "text",
    });
    const msgs = await waitForUnread(t, 2);
    expect(msgs.map((m) => m.text)).toEqual(["hello from a DM", "hello group 熄灭了 👍🏽"]);
    expect(msgs[0]).toMatchObject({
      source: "device_messenger",
      channel_id: FRIEND,
      channel_type: "dm",
      sender: { id: FRIEND, display_name: "Ann", person_id: "ann" },
      direction: "inbound",
      attachments: [],
    });
    expect(msgs[0]?.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(msgs[0]?.raw).toMatchObject({ chat_guid: FRIEND_CHAT, service: "iMessage" });
    expect(msgs[1]).toMatchObject({ channel_id: GROUP_CHAT, channel_type: "group", sender: { id: FRIEND } });
    expect(t.log.entries.some((e) => e.msg.includes("earlier messages are not imported"))).toBe(true);
  });

  test("strangers are quarantined; reactions, group events and empty rows are skipped but passed", async () => {
    const t = await deviceService();
    const first = t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "real one" });
    t.chat.writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text: "buy now" });
    // A tapback on the first message (2000: loved), then its removal (3000).
    for (const [text, associatedMessageType] of [
      ["Loved “real one”", 2000],
      ["", 3000],
    ] as const)
      t.chat.writer.message({
        chatGuid: FRIEND_CHAT,
        from: FRIEND,
        text,
        associatedMessageType,
        associatedMessageGuid: `p:0/${first.guid}`,
      });
    t.chat.writer.message({ chatGuid: GROUP_CHAT, from: FRIEND, text: "", itemType: 1, groupActionType: 0 });
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "" });
    const last = t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "after the skipped ones",
      threadOriginatorGuid: first.guid,
    });
    const msgs = await waitForUnread(t, 2);
    expect(msgs.map((m) => m.text)).toEqual(["real one", "after the skipped ones"]);
    expect(msgs[1]?.reply_to).toBe(msgs[0]?.id as string);
    const q = (await (await t.request("GET", "/messages/quarantine", { headers: AUTH })).json()) as List;
    expect(q.messages.map((m) => m.text)).toEqual(["buy now"]);
    await waitFor(
      () => (t.svc.store.cursors.get("device_messenger")?.position === String(last.rowid) ? true : undefined),
      "cursor at the last row",
    );
  });

  test("a row whose chat join lands later is delivered, and the cursor never passes it meanwhile", async () => {
    const t = await deviceService();
    const late = t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "joined late",
      joinChat: false,
    });
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "joined at once" });
    // A negative check needs time to pass: several 50 ms polls run, and none may pass the unjoined row.
    await Bun.sleep(300);
    expect(Number(t.svc.store.cursors.get("device_messenger")?.position)).toBeLessThan(late.rowid);
    expect(await unread(t)).toEqual([]);
    t.chat.writer.joinChat(late.rowid, FRIEND_CHAT);
    const msgs = await waitForUnread(t, 2);
    expect(msgs.map((m) => m.text)).toEqual(["joined late", "joined at once"]);
  });

  test("attachments are re-hosted and streamed; a file still missing after the wait is left out with a warning", async () => {
    const t = await deviceService({ env: { GW_DEVICE_ATTACHMENT_WAIT_MS: "300" } });
    const files = join(t.dir, "Library/Messages/Attachments/ab/01/GUID-1");
    mkdirSync(files, { recursive: true });
    writeFileSync(join(files, "photo.jpg"), "JPEGBYTES");
    t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "look",
      attachments: [
        {
          path: "~/Library/Messages/Attachments/ab/01/GUID-1/photo.jpg",
          mimeType: null,
          uti: "public.jpeg",
          transferName: "photo.jpg",
        },
        {
          path: "~/Library/Messages/Attachments/ab/02/GONE/offloaded.png",
          mimeType: "image/png",
          transferName: "offloaded.png",
        },
      ],
    });
    const [m] = await waitForUnread(t, 1);
    expect(m?.text).toBe("look");
    expect(m?.attachments).toHaveLength(1);
    expect(m?.attachments[0]).toMatchObject({ mime: "image/jpeg", size_bytes: 9 });
    const res = await t.request("GET", `/attachments/${m?.attachments[0]?.id}`, { headers: AUTH });
    expect(await res.text()).toBe("JPEGBYTES");
    expect(t.log.entries.some((e) => e.level === "warn" && e.msg === "attachment not re-hosted")).toBe(true);
  });

  test("rows written while gw was stopped are all delivered exactly once after the restart", async () => {
    const t = await deviceService();
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "before stop" });
    await waitForUnread(t, 1);
    await t.svc.close();
    for (let i = 0; i < 250; i++)
      t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `while stopped ${i}` });
    const again = await t.start();
    const req = (await import("../helpers/service.ts")).makeRequest(again.app);
    await waitFor(async () => {
      const n = (again.store.db.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number }).n;
      return n === 251 ? true : undefined;
    }, "251 stored messages");
    const all = ((await (await req("GET", "/messages/unread?limit=100", { headers: AGENT })).json()) as List)
      .messages;
    expect(all[0]?.text).toBe("before stop");
    expect(new Set(all.map((m) => m.text)).size).toBe(100);
  });

  test("a replaced database restarts at its end instead of replaying it", async () => {
    const t = await deviceService();
    for (let i = 0; i < 5; i++)
      t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `first db ${i}` });
    await waitForUnread(t, 5);
    // A rebuilt chat.db: fewer rows, a new file in place of the old one.
    const fresh = join(t.dir, "fresh.db");
    const w = openChatDbWriter(fresh);
    w.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
    w.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "old row in the rebuilt file" });
    w.close();
    t.chat.writer.close();
    for (const suffix of ["-wal", "-shm"]) rmSync(`${t.chat.path}${suffix}`, { force: true });
    renameSync(fresh, t.chat.path);
    await waitFor(
      () =>
        t.log.entries.some((e) => e.msg.includes("not imported") && JSON.stringify(e.obj).includes("rebuilt"))
          ? true
          : undefined,
      "rebuild detected",
    );
    const w2 = openChatDbWriter(t.chat.path);
    w2.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "new after rebuild" });
    const msgs = await waitForUnread(t, 6);
    expect(msgs.map((m) => m.text)).toEqual([
      "first db 0",
      "first db 1",
      "first db 2",
      "first db 3",
      "first db 4",
      "new after rebuild",
    ]);
    w2.close();
  });

  test("health: error with a fix when chat.db is missing, ok once it exists", async () => {
    const dir = tempDir();
    const t = await deviceService({ dir, env: { GW_CHAT_DB_PATH: join(dir, "elsewhere/chat.db") } });
    const health = async () =>
      (await (await t.request("GET", "/healthz")).json()) as {
        status: string;
        connectors: Record<string, { state: string; detail: string }>;
      };
    const bad = await health();
    expect(bad.status).toBe("degraded");
    expect(bad.connectors.device_messenger?.state).toBe("error");
    expect(bad.connectors.device_messenger?.detail).toContain("Full Disk Access");
    mkdirSync(join(dir, "elsewhere"));
    openChatDbWriter(join(dir, "elsewhere/chat.db")).close();
    await waitFor(
      async () => ((await health()).connectors.device_messenger?.state === "ok" ? true : undefined),
      "state ok",
    );
  });
});

test("health turns degraded when reading stalls, with the lag in the detail", async () => {
  let now = Date.now();
  const clock = { now: () => now };
  const t = await deviceService({ clock });
  const health = async () =>
    (
      (await (await t.request("GET", "/healthz")).json()) as {
        connectors: { device_messenger: { state: string; detail: string } };
      }
    ).connectors.device_messenger;
  await waitFor(async () => ((await health()).state === "ok" ? true : undefined), "state ok");
  t.svc.store.db.run("DROP TABLE read_runs"); // every ingest now fails: the reader cannot move on
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "stuck" });
  await waitFor(
    async () => ((await health()).detail.includes("1 rows behind") ? true : undefined),
    "lag reported",
  );
  await waitFor(
    () => (t.log.entries.some((e) => e.msg.startsWith("reading chat.db failed")) ? true : undefined),
    "a failed read",
  );
  now += 11_000;
  const h = await health();
  expect(h.state).toBe("degraded");
  expect(h.detail).toContain("1 rows waiting");
});

describe("sending through Messages", () => {
  async function seeded(osascriptTimeoutMs?: number) {
    const t = await deviceService(osascriptTimeoutMs ? { osascriptTimeoutMs } : {});
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hi" });
    await waitForUnread(t, 1);
    const send = async (body: unknown, headers: Record<string, string> = {}) => {
      const res = await t.request("POST", "/messages/send", { headers: { ...AUTH, ...headers }, body });
      return {
        status: res.status,
        body: (await res.json()) as Record<string, unknown> & {
          error?: { code: string; details: Record<string, unknown> };
        },
      };
    };
    return { ...t, send };
  }

  test("a reply lands in the chat, is linked to one outbound record, and is never unread", async () => {
    const t = await seeded();
    const r = await t.send({ channel_id: FRIEND, text: "On my way — 10 min" });
    expect(r.status).toBe(200);
    const row = t.svc.store.messages.get(r.body.message_id as string);
    expect(row?.platform_id).toMatch(/^[0-9A-F-]{36}$/);
    const chat = new Database(t.chat.path, { readonly: true });
    const sent = chat
      .query("SELECT guid, is_from_me FROM message WHERE guid = ?1")
      .get(row?.platform_id as string);
    chat.close();
    expect(sent).toEqual({ guid: row?.platform_id, is_from_me: 1 });
    // The poller reads the echo row too; once its cursor has passed it, there must still be one record.
    const echoRowid = (() => {
      const db = new Database(t.chat.path, { readonly: true });
      const r = db.query("SELECT MAX(ROWID) AS m FROM message").get() as { m: number };
      db.close();
      return r.m;
    })();
    await waitFor(
      () => (Number(t.svc.store.cursors.get("device_messenger")?.position) >= echoRowid ? true : undefined),
      "the poller past the echo",
    );
    expect(countOutbound(t)).toBe(1);
    expect((await unread(t)).map((m) => m.text)).toEqual(["hi"]);
    const log = (await Bun.file(t.env.GW_STANDIN_LOG as string).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log[0].argv.slice(-2)).toEqual(["On my way — 10 min", FRIEND_CHAT]);
    expect(log[0].script).toContain("on run argv");
    expect(log[0].script).not.toContain("On my way");
  });

  test("the owner's own message typed on the phone is stored outbound: in context, never unread", async () => {
    const t = await seeded();
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: null, isFromMe: true, text: "typed on my phone" });
    await waitFor(() => (countOutbound(t) === 1 ? true : undefined), "own message stored");
    expect((await unread(t)).map((m) => m.text)).toEqual(["hi"]);
  });

  test("staged copies a killed gw left behind are removed at start-up; younger ones and other files stay", async () => {
    const dir = tempDir();
    const root = join(dir, "Library/Messages/Attachments/gw");
    const staged = (name: string, ageMs: number) => {
      mkdirSync(join(root, name), { recursive: true });
      writeFileSync(join(root, name, "photo.jpg"), "jpeg");
      const at = new Date(Date.now() - ageMs);
      utimesSync(join(root, name), at, at);
      return join(root, name);
    };
    const old = staged("0b6d9a8e-7c1f-4d3e-9a2b-5f4e3d2c1b0a", 10 * 60_000);
    const young = staged("1c7eab9f-8d20-4e4f-8b3c-6a5f4e3d2c1b", 5_000);
    const other = staged("not-a-gw-folder", 10 * 60_000);
    const t = await deviceService({ dir });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
    expect(existsSync(other)).toBe(true);
    expect(t.log.entries.find((e) => e.msg.startsWith("removed staged copies"))?.obj).toEqual({ removed: 1 });
  });

  test("an attachment by path is copied where Messages can read it and sent as a file", async () => {
    const t = await seeded();
    mkdirSync(join(t.dir, "outbox"));
    writeFileSync(join(t.dir, "outbox/report.pdf"), "%PDF-1.4");
    const r = await t.send({
      channel_id: FRIEND,
      text: "the report",
      attachments: [{ path: join(t.dir, "outbox/report.pdf") }],
    });
    expect(r.status).toBe(200);
    const log = (await Bun.file(t.env.GW_STANDIN_LOG as string).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log).toHaveLength(2);
    expect(log[1].script).toContain("POSIX file");
    expect(log[1].argv.at(-2)).toContain(join(t.dir, "Library/Messages/Attachments/gw/"));
    expect(log[1].argv.at(-2)).toEndWith("/report.pdf");
  });

  test.each([
    ["-1743", 502, "PLATFORM_AUTH"],
    ["-1700", 502, "PLATFORM_SEND_FAILED"],
    ["-2753", 502, "PLATFORM_SEND_FAILED"],
  ])("osascript error %s maps to %i %s, and nothing is recorded", async (code, status, errorCode) => {
    const t = await seeded();
    writeFileSync(t.env.GW_STANDIN_FAIL_FILE as string, code);
    const r = await t.send({ channel_id: FRIEND, text: "x" });
    expect(r.status).toBe(status);
    expect(r.body.error?.code).toBe(errorCode);
    expect(r.body.error?.details.osascript_error).toBe(Number(code));
    expect(countOutbound(t)).toBe(0);
  });

  test("a send that times out is 502 with an unknown outcome, remembered under its key, never retried", async () => {
    const t = await seeded(500);
    writeFileSync(t.env.GW_STANDIN_FAIL_FILE as string, "timeout");
    const first = await t.send({ channel_id: FRIEND, text: "slow" }, { "idempotency-key": "k-timeout" });
    expect(first.status).toBe(502);
    expect(first.body.error).toMatchObject({ code: "PLATFORM_SEND_FAILED", details: { outcome: "unknown" } });
    const replay = await t.send({ channel_id: FRIEND, text: "slow" }, { "idempotency-key": "k-timeout" });
    expect(replay.body).toEqual(first.body);
    const calls = (await Bun.file(t.env.GW_STANDIN_LOG as string).text()).trim().split("\n");
    expect(calls).toHaveLength(1);
  });

  test("a chat id Messages cannot find (-1728) is retried once by participant for a DM", async () => {
    const t = await seeded();
    writeFileSync(t.env.GW_STANDIN_FAIL_FILE as string, "-1728");
    const r = await t.send({ channel_id: FRIEND, text: "via participant" });
    expect(r.status).toBe(200);
    const log = (await Bun.file(t.env.GW_STANDIN_LOG as string).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(log.map((l: { script: string }) => l.script.includes("participant"))).toEqual([false, true]);
    expect(log[1].argv.slice(-2)).toEqual(["via participant", FRIEND]);
  });
});

test("a missing GW_OSASCRIPT_PATH program is 502 PLATFORM_SEND_FAILED naming the setting", async () => {
  const t = await deviceService({ env: { GW_OSASCRIPT_PATH: "/nonexistent/osascript" } });
  t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hi" });
  await waitForUnread(t, 1);
  const res = await t.request("POST", "/messages/send", {
    headers: AUTH,
    body: { channel_id: FRIEND, text: "x" },
  });
  expect(res.status).toBe(502);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe("PLATFORM_SEND_FAILED");
  expect(body.error.message).toContain("GW_OSASCRIPT_PATH");
});
