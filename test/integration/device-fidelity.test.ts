/**
 * The iMessage cases that bite real Macs (chatdb.md §7–9), against the real service and a chat.db
 * written the way Messages writes it: an iCloud backfill burst under new ROWIDs (fenced, across a
 * restart), photos whose attachment rows and files arrive late (delivered once, with the file, in chat
 * order; or without it after the wait), a misrouted send that leaves a ghost row (502), a 100 MB
 * attachment copied without stalling the API, and an osascript whose helper ignores SIGTERM.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ascending, percentile } from "../../bench/lib/stats.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { webhookSink } from "../fakes/webhook-sink.ts";
import { deviceService, FRIEND, FRIEND_CHAT, STRANGER, STRANGER_CHAT } from "../helpers/device.ts";
import { isAlive, waitFor } from "../helpers/process.ts";
import { AGENT, AUTH, makeRequest } from "../helpers/service.ts";

type Device = Awaited<ReturnType<typeof deviceService>>;
const DAY = 24 * 3_600_000;

const unreadOf = async (request: Device["request"]) =>
  (
    (await (await request("GET", "/messages/unread?limit=100", { headers: AGENT })).json()) as {
      messages: Envelope[];
    }
  ).messages;

const health = async (request: Device["request"]) =>
  (
    (await (await request("GET", "/healthz")).json()) as {
      connectors: { device_messenger: { state: string; detail: string } };
    }
  ).connectors.device_messenger;

/** A file under ~/Library/Messages/Attachments, and the `filename` Messages would store for it. */
function attachmentFile(dir: string, name: string, bytes: Uint8Array | string | null) {
  const rel = `Library/Messages/Attachments/ab/${crypto.randomUUID()}/${name}`;
  const abs = join(dir, rel);
  mkdirSync(dirname(abs), { recursive: true });
  if (bytes !== null) writeFileSync(abs, bytes);
  return { path: `~/${rel}`, abs };
}

describe("iCloud backfill", () => {
  test("2,000 old rows under new ROWIDs are fenced while fresh messages keep arriving, across a restart", async () => {
    const sink = webhookSink();
    try {
      const t = await deviceService({ env: { GW_WEBHOOK_URL: sink.url, GW_WEBHOOK_SECRET: "s3cret" } });
      t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "fresh 0" });
      await waitFor(async () => ((await unreadOf(t.request)).length === 1 ? true : undefined), "fresh 0");
      const old = Date.now() - 90 * DAY;
      let svc = t.svc;
      const fresh = ["fresh 0"];
      for (let burst = 0; burst < 8; burst++) {
        t.chat.writer.db.transaction(() => {
          for (let i = 0; i < 250; i++)
            t.chat.writer.message({
              chatGuid: burst % 2 ? FRIEND_CHAT : STRANGER_CHAT,
              from: burst % 2 ? FRIEND : STRANGER,
              text: `backfilled ${burst}-${i}`,
              dateMs: old + burst * 1000 + i,
            });
        })();
        const text = `fresh ${burst + 1}`;
        t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
        fresh.push(text);
        if (burst === 3) {
          await svc.close();
          svc = await t.start();
        }
      }
      const request = makeRequest(svc.app);
      const texts = await waitFor(async () => {
        const list = (await unreadOf(request)).map((m) => m.text);
        return list.length === fresh.length ? list : undefined;
      }, "every fresh message");
      expect(texts).toEqual(fresh);
      await waitFor(() => (sink.hits.length === fresh.length ? true : undefined), "the fresh webhooks");
      await Bun.sleep(200);
      expect(sink.hits.map((h) => (JSON.parse(h.body) as Envelope).text)).toEqual(fresh);
      const stored = svc.store.db.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number };
      expect(stored.n).toBe(fresh.length);
      expect((await health(request)).detail).toContain("2000 old row(s) held back as iCloud backfill");
      expect(
        t.log.entries.some((e) => e.msg.startsWith("old rows re-inserted into chat.db (iCloud backfill)")),
      ).toBe(true);
    } finally {
      sink.stop();
    }
  });
});

describe("attachments that arrive late", () => {
  test("a photo landing in three steps is delivered once, with its file, ahead of the next message of its chat", async () => {
    const t = await deviceService();
    const file = attachmentFile(t.dir, "IMG_0001.HEIC", null);
    const { rowid } = t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "look",
      placeholders: 1,
    });
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "after the photo" });
    t.chat.writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text: "another chat goes on" });
    await waitFor(
      () =>
        t.svc.store.db.query("SELECT 1 FROM messages WHERE text = 'another chat goes on'").get()
          ? true
          : undefined,
      "the other chat's message",
    );
    expect(await unreadOf(t.request)).toEqual([]);
    expect((await health(t.request)).detail).toContain("2 message(s) waiting for attachments");

    const { guid } = t.chat.writer.attach(rowid, {
      path: "",
      transferName: "IMG_0001.HEIC",
      transferState: 0,
    });
    await Bun.sleep(300);
    expect(await unreadOf(t.request)).toEqual([]);
    writeFileSync(file.abs, "HEICBYTES");
    t.chat.writer.updateAttachment(guid, { transferState: 5, path: file.path, totalBytes: 9 });

    const list = await waitFor(async () => {
      const l = await unreadOf(t.request);
      return l.length === 2 ? l : undefined;
    }, "the photo and the next message");
    expect(list.map((m) => [m.text, m.attachments.length])).toEqual([
      ["look", 1],
      ["after the photo", 0],
    ]);
    expect(list[0]?.attachments[0]).toMatchObject({ mime: "image/heic", size_bytes: 9 });
    const res = await t.request("GET", `/attachments/${list[0]?.attachments[0]?.id}`, { headers: AUTH });
    expect(await res.text()).toBe("HEICBYTES");
    // Stored in chat order: the photo before the message written after it.
    expect((list[0]?.id as string) < (list[1]?.id as string)).toBe(true);
    await Bun.sleep(300);
    const stored = t.svc.store.db.query("SELECT COUNT(*) AS n FROM messages WHERE text = 'look'").get() as {
      n: number;
    };
    expect(stored.n).toBe(1);
  });

  test("a file that never appears: the message goes out after the wait without it, with a warning", async () => {
    const t = await deviceService({ env: { GW_DEVICE_ATTACHMENT_WAIT_MS: "600" } });
    const file = attachmentFile(t.dir, "never.jpg", null);
    const t0 = Date.now();
    t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "photo incoming",
      attachments: [{ path: file.path, transferState: 3 }],
    });
    const [m] = await waitFor(async () => {
      const l = await unreadOf(t.request);
      return l.length ? l : undefined;
    }, "the message");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600);
    expect(m).toMatchObject({ text: "photo incoming", attachments: [] });
    expect(
      t.log.entries.some(
        (e) => e.msg === "attachments still not ready; the message is delivered without them",
      ),
    ).toBe(true);
  });

  test("a 100 MB attachment is copied without stalling the API: /healthz every 10 ms stays under 50 ms at p99", async () => {
    const t = await deviceService();
    const size = 100_000_000;
    const file = attachmentFile(t.dir, "big.mov", new Uint8Array(size).fill(7));
    const latencies: number[] = [];
    let done = false;
    const poll = (async () => {
      while (!done) {
        const t0 = performance.now();
        await t.request("GET", "/healthz");
        latencies.push(performance.now() - t0);
        await Bun.sleep(10);
      }
    })();
    t.chat.writer.message({
      chatGuid: FRIEND_CHAT,
      from: FRIEND,
      text: "big",
      attachments: [{ path: file.path }],
    });
    const [m] = await waitFor(
      async () => {
        const l = await unreadOf(t.request);
        return l.length ? l : undefined;
      },
      "the big message",
      20_000,
    );
    done = true;
    await poll;
    expect(m?.attachments[0]?.size_bytes).toBe(size);
    const p99 = percentile(ascending(latencies), 99);
    expect(latencies.length).toBeGreaterThan(2);
    expect(p99).toBeLessThan(50);
  });
});

describe("sends Messages gets wrong", () => {
  async function seeded(osascriptTimeoutMs?: number) {
    const t = await deviceService(osascriptTimeoutMs ? { osascriptTimeoutMs } : {});
    t.chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hi" });
    await waitFor(async () => ((await unreadOf(t.request)).length ? true : undefined), "the first message");
    const send = async (text: string, key: string) => {
      const res = await t.request("POST", "/messages/send", {
        headers: { ...AUTH, "idempotency-key": key },
        body: { channel_id: FRIEND, text },
      });
      return { status: res.status, text: await res.text() };
    };
    return { ...t, send };
  }

  test("a send that leaves only a ghost row (misrouted, macOS 26) is 502, cached under its key", async () => {
    const t = await seeded();
    writeFileSync(t.env.GW_STANDIN_FAIL_FILE as string, "ghost");
    const first = await t.send("are you there?", "k-ghost");
    expect(first.status).toBe(502);
    expect(JSON.parse(first.text)).toMatchObject({
      error: { code: "PLATFORM_SEND_FAILED", details: { reason: "misrouted" } },
    });
    const again = await t.send("are you there?", "k-ghost");
    expect(again).toEqual(first);
    const calls = (await Bun.file(t.env.GW_STANDIN_LOG as string).text()).trim().split("\n");
    expect(calls).toHaveLength(1);
  });

  test("a timed-out osascript is stopped with its whole process group, a helper ignoring SIGTERM included", async () => {
    const t = await seeded(300);
    writeFileSync(t.env.GW_STANDIN_FAIL_FILE as string, "timeout-with-child");
    const r = await t.send("slow", "k-slow");
    expect(r.status).toBe(502);
    expect(JSON.parse(r.text)).toMatchObject({ error: { details: { outcome: "unknown" } } });
    const log = (await Bun.file(t.env.GW_STANDIN_LOG as string).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const child = log.find((l) => "child" in l)?.child as number;
    expect(child).toBeGreaterThan(0);
    await waitFor(() => (isAlive(child) ? undefined : true), "the helper to be gone", 3_000);
  });
});
