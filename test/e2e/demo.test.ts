/**
 * `gw demo` as a newcomer runs it, from source and as the compiled binary: messages arrive from the
 * simulated iMessage account and from the fake Discord, unread returns the allowlisted ones of both
 * (one person), quarantine holds a stranger of each, a reply sent through the API lands back in the demo
 * chat.db as Messages would write it and one posted to the Discord channel is printed as the fake
 * records it, the built-in receiver prints a verified webhook line per source, nothing in the output is
 * a warning, and Ctrl-C stops it cleanly and removes its folder.
 */
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { ensureBinary, freePort, spawnGw, waitFor } from "../helpers/process.ts";
import { tempDir } from "../helpers/temp.ts";

interface Listed {
  messages: {
    source: string;
    channel_id: string;
    sender: { display_name: string; person_id: string | null };
  }[];
}

// At module scope, not in beforeAll: a stale bun test timeout may kill what hooks spawned (oven-sh/bun#38774).
await ensureBinary();

const bothSources = (list: Listed["messages"]) =>
  ["device_messenger", "community_chat"].every((s) => list.some((m) => m.source === s)) ? list : undefined;

test.each([false, true])(
  "gw demo (compiled: %p): both platforms, replies, webhooks, clean stop",
  async (binary) => {
    const port = freePort();
    const gw = spawnGw(
      ["demo", "--interval", "0.1"],
      { HOME: tempDir(), GW_BIND_PORT: String(port) },
      { binary },
    );
    const stdout = () => gw.output().stdout;
    try {
      const out = await waitFor(
        () => (stdout().includes("Press Ctrl-C") ? stdout() : undefined),
        "the banner",
      );
      const token = /export GW_BEARER_TOKEN=([0-9a-f]{48})/.exec(out)?.[1] as string;
      const chatDb = /Demo chat\.db: (\S+)/.exec(out)?.[1] as string;
      const discordChannel = /"channel_id": "(community_chat:channel:\d+)"/.exec(out)?.[1] as string;
      expect(token).toBeDefined();
      expect(discordChannel).toBeDefined();
      const base = `http://127.0.0.1:${port}`;
      const auth = { authorization: `Bearer ${token}` };
      const list = async (path: string) =>
        (
          (await (
            await fetch(`${base}${path}`, { headers: { ...auth, "x-agent-id": "newcomer" } })
          ).json()) as Listed
        ).messages;

      const unread = await waitFor(
        async () => bothSources(await list("/messages/unread")),
        "unread from both",
      );
      expect(unread[0]?.sender.display_name).toBe("Demo Friend");
      expect(new Set(unread.map((m) => m.sender.person_id))).toEqual(new Set(["demo-friend"]));
      // The search and react lines work as printed (bash and curl, as a newcomer pastes them).
      const printed = (heading: string, n: number) =>
        out
          .slice(out.indexOf(heading))
          .split("\n")
          .slice(1, 1 + n)
          .join("\n");
      const paste = (script: string) => {
        const r = Bun.spawnSync(["bash", "-c", script], { stdout: "pipe", stderr: "pipe" });
        return JSON.parse(r.stdout.toString() || "null") as Record<string, unknown> | null;
      };
      const found = await waitFor(() => {
        const r = paste(printed("Search both platforms", 1)) as Listed | null;
        return r && r.messages.length > 0 ? r.messages : undefined;
      }, "the printed search line finds lunch");
      expect(
        found.every((m) => (m as unknown as { text: string }).text.toLowerCase().includes("lunch")),
      ).toBe(true);
      const reacted = await waitFor(() => {
        const r = paste(printed("React 👍 on Discord", 2));
        return r && "removed" in r ? r : undefined;
      }, "the printed react lines");
      expect(reacted).toMatchObject({ emoji: "👍", removed: false });
      expect(String(reacted.message_id)).toMatch(/^msg_/);

      const quarantined = await waitFor(
        async () => bothSources(await list("/messages/quarantine")),
        "quarantine from both",
      );
      expect(quarantined.every((m) => m.sender.person_id === null)).toBe(true);

      const send = (channel_id: string, text: string, key: string) =>
        fetch(`${base}/messages/send`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify({ channel_id, text }),
        });
      const friendChat = unread.find((m) => m.source === "device_messenger")?.channel_id as string;
      expect((await send(friendChat, "Sounds good!", "demo-1")).status).toBe(200);
      expect((await send(discordChannel, "Hello from the test!", "demo-2")).status).toBe(200);
      await waitFor(
        () =>
          stdout().includes('discord   posted in #general as @gw-demo-bot: "Hello from the test!"') ||
          undefined,
        "the fake Discord's recorded post",
      );
      await waitFor(
        () => stdout().includes('imessage  sent to +15555550100: "Sounds good!"') || undefined,
        "the stand-in's reply line",
      );
      const mine = await waitFor(() => {
        const db = new Database(chatDb, { readonly: true });
        const r = db.query("SELECT COUNT(*) AS n FROM message WHERE is_from_me = 1").get() as { n: number };
        db.close();
        return r.n > 0 ? r : undefined;
      }, "the reply in the demo chat.db");
      expect(mine.n).toBe(1);
      for (const source of ["device_messenger", "community_chat"])
        await waitFor(
          () => new RegExp(`^webhook {3}[0-9a-f-]{36} {2}${source} +\\S`, "m").test(stdout()) || undefined,
          `a verified webhook line for ${source}`,
        );

      gw.proc.kill("SIGINT");
      expect(await gw.exited).toBe(0);
      expect(existsSync(chatDb)).toBe(false);
      const { stdout: all, stderr } = gw.output();
      expect(all).toContain("gw demo stopped; its temporary folder is removed.");
      expect(all).not.toMatch(/warn|refused/i);
      expect(stderr).toBe("");
    } finally {
      gw.proc.kill("SIGKILL");
    }
  },
);
