/**
 * `gw demo` as a newcomer runs it, from source and as the compiled binary: messages arrive, unread
 * returns the allowlisted ones, a reply sent through the API lands back in the demo chat.db as
 * Messages would write it, and Ctrl-C stops it cleanly and removes its folder.
 */
import { Database } from "bun:sqlite";
import { beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { ensureBinary, freePort, spawnGw, waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

beforeAll(async () => {
  await ensureBinary();
}, 120_000);

test.each([false, true])("gw demo (compiled: %p): read, reply, stop", async (binary) => {
  const port = freePort();
  const gw = spawnGw(
    ["demo", "--interval", "0.2"],
    { HOME: tempDir(), GW_BIND_PORT: String(port) },
    { binary },
  );
  try {
    const out = await waitFor(() => {
      const o = gw.output().stdout;
      return o.includes("Press Ctrl-C") ? o : undefined;
    }, "the demo banner");
    const token = /export GW_BEARER_TOKEN=([0-9a-f]{48})/.exec(out)?.[1] as string;
    const chatDb = /Demo chat\.db: (\S+)/.exec(out)?.[1] as string;
    expect(token).toBeDefined();
    const base = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${token}` };
    const unread = await waitFor(async () => {
      const res = await fetch(`${base}/messages/unread`, { headers: { ...auth, "x-agent-id": "newcomer" } });
      const body = (await res.json()) as {
        messages: { channel_id: string; sender: { display_name: string } }[];
      };
      return body.messages.length >= 2 ? body.messages : undefined;
    }, "two unread demo messages");
    expect(unread[0]?.sender.display_name).toBe("Demo Friend");
    const quarantine = (await (await fetch(`${base}/messages/quarantine`, { headers: auth })).json()) as {
      messages: unknown[];
    };
    expect(quarantine.messages.length).toBeGreaterThan(0);

    const sent = await fetch(`${base}/messages/send`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "idempotency-key": "demo-1" },
      body: JSON.stringify({ channel_id: unread[0]?.channel_id, text: "Sounds good!" }),
    });
    expect(sent.status).toBe(200);
    const mine = await waitFor(() => {
      const db = new Database(chatDb, { readonly: true });
      const r = db.query("SELECT COUNT(*) AS n FROM message WHERE is_from_me = 1").get() as { n: number };
      db.close();
      return r.n > 0 ? r : undefined;
    }, "the reply in the demo chat.db");
    expect(mine.n).toBe(1);
    gw.proc.kill("SIGINT");
    expect(await gw.exited).toBe(0);
    expect(existsSync(chatDb)).toBe(false);
  } finally {
    gw.proc.kill("SIGKILL");
  }
});
