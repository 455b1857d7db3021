/**
 * Child process of bench/discord/discord.ts: the raw baselines, discord.js alone (no gw code).
 *
 *   bun run bench/discord/raw.ts client    # a bare discord.js Client logged in to the fake (latency)
 *   bun run bench/discord/raw.ts catchup   # login, then page missed history into bun:sqlite (catch-up)
 *
 * Both build the Client the way the brief and gw do: intents Guilds, GuildMessages, DirectMessages,
 * MessageContent, the Channel partial, `rest.api` = BENCH_API_URL, token BENCH_TOKEN. Stamps are this
 * process's wall clock (`performance.timeOrigin + performance.now()`).
 *
 * client: prints `{"ready":0}` at clientReady and records, in memory, for every message not from the
 * bot: `dispatch` (the MESSAGE_CREATE dispatch emitted on `client.ws`, the point where gw's connector
 * takes the payload) and `event` (the `messageCreate` event, discord.js's Message built). With
 * BENCH_RAW_STORE = JSON {dbPath, ddl} it also commits each message, right after the event, as one row
 * in its own transaction (gw's pragmas and messages table) and records `stored`. Command `stamps` →
 * {dispatch, event, stored: [[content, t], ...]}.
 *
 * catchup: BENCH_CATCHUP is JSON {channels: [[channelId, afterId], ...], max, concurrency, unpaced,
 * dbPath, ddl: [sql, ...]}. It first opens dbPath with gw's pragmas (WAL, synchronous FULL, fullfsync,
 * foreign keys, busy timeout) and runs `ddl` (gw's own messages table and indexes, read from a gw
 * database by the parent), as gw opens its store before start(). Then, timed: import discord.js, log
 * in (to clientReady), and page each channel's history after its id with `client.rest.get(Routes.
 * channelMessages(id), {after, limit})`, up to `max` per channel, 100 per request, `concurrency`
 * channels at a time (gw's catch-up uses 5), inserting every page in one transaction with rows shaped
 * as gw's ingest shapes them (INSERT OR IGNORE on the platform-id key). `unpaced` lifts discord.js's
 * pacing to Discord's 50 requests/s (globalRequestsPerSecond 1,000,000: only a fake allows that).
 * Prints `{"done":n, rows, storeMs, stamps: {process, begin, imported, ready, all}}` (storeMs: time in the
 * page transactions), then answers the commands of
 * lib/child-protocol.ts (so the parent can measure the clock offset) until stopped.
 */
import { Database } from "bun:sqlite";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";

const mode = process.argv[2];
const token = process.env.BENCH_TOKEN ?? "";
const api = process.env.BENCH_API_URL ?? "";

type Item = {
  id: string;
  channel_id: string;
  author: { id: string; username: string; global_name?: string | null };
  content: string;
};

/**
 * A bun:sqlite database with gw's pragmas (src/store/open.ts) and gw's messages table (`ddl`, read from a
 * gw database by the parent), and a transaction inserting a page of messages shaped as gw's ingest
 * shapes them (INSERT OR IGNORE on the platform-id key).
 */
function openDb(o: { dbPath: string; ddl: string[] }) {
  const db = new Database(o.dbPath, { create: true, strict: true });
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA synchronous = FULL");
  db.run("PRAGMA fullfsync = ON");
  db.run("PRAGMA foreign_keys = ON");
  for (const sql of o.ddl) db.run(sql);
  const insert = db.prepare(
    `INSERT OR IGNORE INTO messages (id, source, platform_id, channel_id, channel_type, sender_id, sender_name,
       person_id, text, reply_to, message_ts, direction, allowlist_status, raw, created_at)
     VALUES (?1, 'community_chat', ?2, ?3, 'group', ?4, ?5, 'ann', ?6, NULL, ?7, 'inbound', 'allowed', ?8, ?9)`,
  );
  const insertPage = db.transaction((page: Item[]) => {
    const at = Date.now();
    for (const m of page)
      insert.run(
        `msg_${Bun.randomUUIDv7()}`,
        m.id,
        `community_chat:channel:${m.channel_id}`,
        m.author.id,
        m.author.global_name || m.author.username,
        m.content,
        Number((BigInt(m.id) >> 22n) + 1_420_070_400_000n),
        JSON.stringify(m),
        at,
      );
  });
  return { db, insertPage };
}

function openStore(o: { dbPath: string; ddl: string[] }) {
  const { insertPage } = openDb(o);
  return (page: Item[]) => insertPage.immediate(page);
}

type DiscordJs = typeof import("discord.js");

/** A Client built as gw's connector builds it: its intents, the Channel partial, REST at BENCH_API_URL. */
function clientOf(djs: DiscordJs, rest: { globalRequestsPerSecond?: number } = {}) {
  const I = djs.GatewayIntentBits;
  return new djs.Client({
    intents: [I.Guilds, I.GuildMessages, I.DirectMessages, I.MessageContent],
    partials: [djs.Partials.Channel],
    rest: { api, ...rest },
  });
}

if (mode === "client") {
  const djs = await import("discord.js");
  const { Events, GatewayDispatchEvents } = djs;
  const client = clientOf(djs);
  const dispatch: [string, number][] = [];
  const event: [string, number][] = [];
  const stored: [string, number][] = [];
  const store = process.env.BENCH_RAW_STORE ? openStore(JSON.parse(process.env.BENCH_RAW_STORE)) : null;
  client.ws.on(GatewayDispatchEvents.MessageCreate, (d: Item) => {
    const t = now();
    if (d.author.id !== client.user?.id) dispatch.push([d.content, t]);
  });
  client.on(Events.MessageCreate, (m) => {
    const t = now();
    if (m.author.id === client.user?.id) return;
    event.push([m.content, t]);
    if (store) {
      store([
        {
          id: m.id,
          channel_id: m.channelId,
          author: { id: m.author.id, username: m.author.username, global_name: m.author.globalName },
          content: m.content,
        },
      ]);
      stored.push([m.content, now()]);
    }
  });
  await new Promise<void>((resolve, reject) => {
    client.once(Events.ClientReady, () => resolve());
    client.login(token).catch(reject);
  });
  emit({ ready: 0 });
  await serveCommands(
    () => client.destroy(),
    (c) => (c.cmd === "stamps" ? { dispatch, event, stored } : { error: `unknown command ${c.cmd}` }),
  );
} else if (mode === "catchup") {
  const o = JSON.parse(process.env.BENCH_CATCHUP ?? "{}") as {
    channels: [string, string][];
    max: number;
    concurrency: number;
    unpaced: boolean;
    dbPath: string;
    ddl: string[];
  };
  const { db, insertPage } = openDb(o);
  let storeMs = 0;
  const store = (page: Item[]) => {
    const t = now();
    insertPage(page);
    storeMs += now() - t;
  };

  const tBegin = now();
  const djs = await import("discord.js");
  const { Events, Routes } = djs;
  const tImported = now();
  const client = clientOf(djs, o.unpaced ? { globalRequestsPerSecond: 1_000_000 } : {});
  await new Promise<void>((resolve, reject) => {
    client.once(Events.ClientReady, () => resolve());
    client.login(token).catch(reject);
  });
  const tReady = now();
  const byId = (a: Item, b: Item) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1);
  const catchUp = async (channelId: string, after: string): Promise<number> => {
    let n = 0;
    let cursor = after;
    while (n < o.max) {
      const want = Math.min(100, o.max - n);
      const page = (await client.rest.get(Routes.channelMessages(channelId), {
        query: new URLSearchParams({ after: cursor, limit: String(want) }),
      })) as Item[];
      page.sort(byId);
      store(page);
      n += page.length;
      const last = page.at(-1);
      if (page.length < want || !last) return n;
      cursor = last.id;
    }
    return n;
  };
  const queue = [...o.channels];
  let n = 0;
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) n += await catchUp(next[0], next[1]);
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const tAll = now();
  const rows = (db.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number }).n;
  emit({
    done: n,
    rows,
    storeMs,
    stamps: { process: performance.timeOrigin, begin: tBegin, imported: tImported, ready: tReady, all: tAll },
  });
  await serveCommands(async () => {
    await client.destroy();
    db.close();
  });
} else {
  process.stderr.write("usage: bun run bench/discord/raw.ts <client|catchup>\n");
  process.exit(2);
}
