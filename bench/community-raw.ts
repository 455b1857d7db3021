/**
 * Child process of bench/community.ts: the raw baselines, with discord.js alone.
 *
 *   bun run bench/community-raw.ts client    # a bare discord.js Client logged in to the fake
 *   bun run bench/community-raw.ts rest      # discord.js's REST client only (catch-up floor)
 *
 * client: intents Guilds, GuildMessages, DirectMessages, MessageContent, the Channel partial, REST at
 * BENCH_API_URL with BENCH_TOKEN; prints `{"ready":0}` at clientReady, then for every message not from
 * the bot `{"event":<content>,"t":<now>}` at its `messageCreate` event.
 * rest: answers `{"cmd":"catchup","channels":[[channelId, afterId], ...],"max":n}` by paging each
 * channel's history after its id, up to n (100 per request, 5 channels at a time, as gw's catch-up does)
 * with discord.js's
 * REST client and inserting every page, in one transaction, into a bun:sqlite table shaped like gw's
 * messages (WAL, synchronous FULL, unique (source, platform id)), emptied before each run; it answers
 * `{"n","ms"}`. With `"unlimited":true` discord.js's pacing to Discord's 50 requests/s is lifted.
 * Both answer the commands of device-child.ts.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, Events, GatewayIntentBits, Partials, REST, Routes } from "discord.js";
import { emit, now, serveCommands } from "./device-child.ts";

const mode = process.argv[2];
const token = process.env.BENCH_TOKEN ?? "";
const api = process.env.BENCH_API_URL ?? "";

if (mode === "client") {
  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.DirectMessages,
      GatewayIntentBits.MessageContent,
    ],
    partials: [Partials.Channel],
    rest: { api },
  });
  client.on(Events.MessageCreate, (m) => {
    const t = now();
    if (m.author.id !== client.user?.id) emit({ event: m.content, t });
  });
  await new Promise<void>((resolve, reject) => {
    client.once(Events.ClientReady, () => resolve());
    client.login(token).catch(reject);
  });
  emit({ ready: 0 });
  await serveCommands(() => client.destroy());
} else if (mode === "rest") {
  const limited = new REST({ api }).setToken(token);
  // Discord allows 50 requests/s per bot and discord.js paces to that; the unlimited client shows the floor
  // without that pacing (only a fake allows it).
  const unlimited = new REST({ api, globalRequestsPerSecond: 1_000_000 }).setToken(token);
  let rest = limited;
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-raw-"));
  const db = new Database(join(dir, "raw.db"), { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  db.run(`CREATE TABLE messages (id INTEGER PRIMARY KEY, source TEXT NOT NULL, platform_id TEXT NOT NULL,
    channel_id TEXT NOT NULL, sender_id TEXT NOT NULL, text TEXT NOT NULL, message_ts INTEGER NOT NULL,
    raw TEXT NOT NULL, UNIQUE (source, platform_id))`);
  const insert = db.prepare(
    `INSERT OR IGNORE INTO messages (source, platform_id, channel_id, sender_id, text, message_ts, raw)
     VALUES ('community_chat', ?1, ?2, ?3, ?4, ?5, ?6)`,
  );
  type Item = { id: string; channel_id: string; author: { id: string }; content: string };
  const store = db.transaction((page: Item[]) => {
    for (const m of page)
      insert.run(m.id, m.channel_id, m.author.id, m.content, Number(BigInt(m.id) >> 22n), JSON.stringify(m));
  });
  const catchUp = async (channelId: string, after: string, max: number): Promise<number> => {
    let n = 0;
    let cursor = after;
    while (n < max) {
      const want = Math.min(100, max - n);
      const page = (await rest.get(Routes.channelMessages(channelId), {
        query: new URLSearchParams({ after: cursor, limit: String(want) }),
      })) as Item[];
      page.sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
      store(page);
      n += page.length;
      if (page.length < want) return n;
      cursor = page.at(-1)?.id as string;
    }
    return n;
  };
  emit({ ready: 0 });
  await serveCommands(
    () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
    async (c) => {
      if (c.cmd !== "catchup") return { error: `unknown command ${c.cmd}` };
      db.run("DELETE FROM messages");
      rest = c.unlimited ? unlimited : limited;
      const queue = [...(c.channels as [string, string][])];
      const t0 = now();
      let n = 0;
      const worker = async () => {
        for (let next = queue.shift(); next; next = queue.shift()) {
          const got = await catchUp(next[0], next[1], c.max as number);
          n += got;
        }
      };
      await Promise.all(Array.from({ length: 5 }, worker));
      return { n, ms: now() - t0 };
    },
  );
} else {
  process.stderr.write("usage: bun run bench/community-raw.ts <client|rest>\n");
  process.exit(2);
}
