/**
 * The unread long poll on a real `gw serve` over real HTTP: a chat.db commit answers a held request at
 * once; a request held longer than the server's default idle timeout (Elysia sets Bun's to 30 s) is still
 * answered; SIGTERM answers the held ones at once and the process exits cleanly.
 */
import { expect, test } from "bun:test";
import { chatDbServeEnv, FRIEND, FRIEND_CHAT } from "../helpers/device.ts";
import { spawnGw, waitFor, waitForHealth } from "../helpers/process.ts";
import { TOKEN } from "../helpers/service.ts";

test("gw serve holds, wakes and ends long polls", async () => {
  const { chat, port, env } = chatDbServeEnv();
  const gw = spawnGw(["serve"], env);
  const unread = (query: string) =>
    fetch(`http://127.0.0.1:${port}/messages/unread?${query}`, {
      headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": "poller" },
    }).then(async (r) => ({
      status: r.status,
      at: performance.now(),
      body: (await r.json()) as { messages: { text: string }[] },
    }));
  try {
    const health = await waitForHealth(port);
    expect(health.status).toBe("ok");

    // Held past the default idle timeout (30 s), meanwhile the rest goes on.
    const t0 = performance.now();
    const long = unread("wait=32&channel_id=nobody");

    // Woken by a commit: answered well before its wait ends.
    const woken = unread("wait=30");
    await Bun.sleep(100);
    const committed = performance.now();
    chat.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: "hello, long poll" });
    const w = await woken;
    expect(w.status).toBe(200);
    expect(w.body.messages.map((m) => m.text)).toEqual(["hello, long poll"]);
    expect(w.at - committed).toBeLessThan(1000);

    const held32 = await long;
    expect(held32.status).toBe(200);
    expect(held32.body.messages).toEqual([]);
    expect(held32.at - t0).toBeGreaterThanOrEqual(31_900);

    // SIGTERM answers the held ones at once.
    const held = [unread("wait=60&channel_id=nobody"), unread("wait=60&source=community_chat")];
    await Bun.sleep(200);
    const stopped = performance.now();
    gw.proc.kill("SIGTERM");
    for (const h of await Promise.all(held)) {
      expect(h.status).toBe(200);
      expect(h.body.messages).toEqual([]);
      expect(h.at - stopped).toBeLessThan(2000);
    }
    expect(await waitFor(() => gw.exited, "gw serve to exit", 5000)).toBe(0);
  } finally {
    gw.proc.kill("SIGKILL");
    chat.writer.close();
  }
}, 60_000);
