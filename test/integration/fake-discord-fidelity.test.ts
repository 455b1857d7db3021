/**
 * The fake Discord is only worth its tests if discord.js accepts it as Discord: a plain discord.js
 * Client (gw's connector aside) reaches clientReady with its caches filled, builds Message objects for
 * guild, thread and DM messages (the DM through the Channel partial and `channel_type`), gets the
 * replay of a resume, is refused with the documented close codes, and honours the rate-limit headers.
 * GUILD_CREATE carries what catch-up plans from (each channel's and thread's `last_message_id`, the
 * roles, overwrites and the bot's member, read by discord.js's own `permissionsFor`); opening a DM
 * returns the existing one; history pages newest first with `before`, `after` or no anchor.
 */
import { expect, test } from "bun:test";
import {
  Events,
  GatewayDispatchEvents,
  type GuildBasedChannel,
  type Message,
  PermissionFlagsBits,
  RateLimitError,
  Routes,
} from "discord.js";
import { readGuild } from "../../src/connectors/community-chat/guild-channels.ts";
import { startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { fakeDiscordClients, loginReady } from "../helpers/discord-client.ts";
import { waitFor } from "../helpers/process.ts";

const newClient = fakeDiscordClients();

async function setUp(opts: { token?: string; messageContentIntent?: boolean; rejectAfterMs?: number } = {}) {
  const fake = await startFakeDiscord({ messageContentIntent: opts.messageContentIntent ?? true });
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const guild = fake.guild({ name: "Home" });
  const general = fake.channel(guild.id, { name: "general" });
  const thread = fake.thread(guild.id, general.id, { name: "plans" });
  const dm = fake.dm(ann);
  const client = newClient(
    fake,
    opts.rejectAfterMs ? { rejectOnRateLimit: (i) => i.timeToReset > (opts.rejectAfterMs as number) } : {},
  );
  const messages: Message[] = [];
  client.on(Events.MessageCreate, (m) => {
    if (m.author.id !== client.user?.id) messages.push(m);
  });
  const login = () => loginReady(client, opts.token);
  return { fake, client, ann, guild, general, thread, dm, messages, login };
}

test("clientReady with the guild, its channel and its thread cached", async () => {
  const s = await setUp();
  await s.login();
  expect(s.client.user?.id).toBe(s.fake.bot.id);
  expect(s.client.guilds.cache.get(s.guild.id)?.name).toBe("Home");
  expect(s.client.channels.cache.get(s.general.id)?.isTextBased()).toBe(true);
  expect(s.client.channels.cache.get(s.thread.id)?.isThread()).toBe(true);
});

test("guild, thread and DM messages become discord.js Messages", async () => {
  const s = await setUp();
  await s.login();
  s.fake.message(s.general.id, { author: s.ann, content: "in general", nick: "Annie" });
  s.fake.message(s.thread.id, { author: s.ann, content: "in the thread", nick: "Annie" });
  s.fake.message(s.dm.id, { author: s.ann, content: "in a DM" });
  await waitFor(() => (s.messages.length === 3 ? true : undefined), "three messages");
  const [g, t, d] = s.messages;
  expect([g?.content, g?.guildId, g?.member?.nickname]).toEqual(["in general", s.guild.id, "Annie"]);
  expect([t?.content, t?.channel.isThread()]).toEqual(["in the thread", true]);
  expect([d?.content, d?.guildId, d?.channel.isDMBased()]).toEqual(["in a DM", null, true]);
  expect(d?.createdTimestamp).toBe(Number((BigInt(d?.id ?? "0") >> 22n) + 1_420_070_400_000n));
});

test("a send is recorded and echoed; a resume replays what was dispatched meanwhile", async () => {
  const s = await setUp();
  await s.login();
  const sent = (await s.client.rest.post(Routes.channelMessages(s.general.id), {
    body: { content: "from the bot" },
  })) as { id: string; author: { id: string } };
  expect(sent.author.id).toBe(s.fake.bot.id);
  expect(s.fake.posted.map((p) => p.body.content)).toEqual(["from the bot"]);
  s.fake.gateway.reconnect();
  s.fake.message(s.general.id, { author: s.ann, content: "while resuming" });
  await waitFor(() => (s.messages.length === 1 ? true : undefined), "the replayed message");
  expect(s.fake.gateway.resumes).toBe(1);
  expect(s.fake.gateway.identifies).toBe(1);
});

test("a wrong token and a disabled Message Content intent are refused as Discord refuses them", async () => {
  const wrong = await setUp({ token: "not-the-token" });
  await expect(wrong.login()).rejects.toThrow(/invalid token/i);
  const noIntent = await setUp({ messageContentIntent: false });
  const closed = new Promise<number>((resolve) =>
    noIntent.client.on(Events.ShardDisconnect, (e) => resolve(e.code)),
  );
  await expect(noIntent.login()).rejects.toThrow(/disallowed intents/i);
  expect(await closed).toBe(4014);
});

test("rate limits carry Discord's headers: a short one is waited out, a long one can be refused", async () => {
  const s = await setUp({ rejectAfterMs: 1_000 });
  await s.login();
  s.fake.rateLimit({ method: "POST", path: /\/messages$/, retryAfterS: 0.2 });
  const t0 = performance.now();
  await s.client.rest.post(Routes.channelMessages(s.general.id), { body: { content: "after a wait" } });
  expect(performance.now() - t0).toBeGreaterThanOrEqual(200);
  s.fake.rateLimit({ method: "POST", path: /\/messages$/, retryAfterS: 5 });
  await expect(
    s.client.rest.post(Routes.channelMessages(s.general.id), { body: { content: "refused" } }),
  ).rejects.toBeInstanceOf(RateLimitError);
  expect(s.fake.posted.map((p) => p.body.content)).toEqual(["after a wait"]);
});

test("GUILD_CREATE: last message ids, and the bot's permissions per channel as discord.js computes them", async () => {
  const s = await setUp();
  const channel = (name: string, access?: "open" | "private" | "hidden" | "no-history") =>
    s.fake.channel(s.guild.id, { name, ...(access ? { access } : {}) });
  const priv = channel("private", "private");
  const hidden = channel("hidden", "hidden");
  const noHistory = channel("no-history", "no-history");
  const quiet = channel("quiet");
  const hiddenThread = s.fake.thread(s.guild.id, hidden.id, { name: "secret plans" });
  const last = (id: string) =>
    s.fake.message(id, { author: s.ann, content: "x", dispatch: false }).id as string;
  const lastIds = {
    general: last(s.general.id),
    thread: last(s.thread.id),
    priv: last(priv.id),
  };
  last(hidden.id);
  let raw: unknown = null;
  s.client.ws.on(GatewayDispatchEvents.GuildCreate, (d: unknown) => {
    raw = d;
  });
  await s.login();
  const me = s.client.guilds.cache.get(s.guild.id)?.members.me;
  expect(me?.id).toBe(s.fake.bot.id);
  const can = (id: string) => {
    const ch = s.client.channels.cache.get(id) as GuildBasedChannel | undefined;
    const p = me ? ch?.permissionsFor(me) : null;
    return [p?.has(PermissionFlagsBits.ViewChannel), p?.has(PermissionFlagsBits.ReadMessageHistory)];
  };
  expect(can(s.general.id)).toEqual([true, true]);
  expect(can(s.thread.id)).toEqual([true, true]);
  expect(can(priv.id)).toEqual([true, true]);
  // discord.js leaves out Discord's implicit deny (no View Channel, no history): only the view bit tells.
  expect(can(hidden.id)[0]).toBe(false);
  expect(can(noHistory.id)).toEqual([true, false]);
  const lastId = (id: string) =>
    (s.client.channels.cache.get(id) as { lastMessageId?: string | null })?.lastMessageId;
  // Discord lists only the threads the bot can see.
  expect(s.client.channels.cache.has(hiddenThread.id)).toBe(false);
  // gw's own reading of the raw GUILD_CREATE (catch-up plans from it) agrees with discord.js.
  const gwView = readGuild(raw, s.fake.bot.id)?.channels ?? [];
  expect(gwView.map((c) => c.id).sort()).toEqual(
    [s.general.id, s.thread.id, priv.id, hidden.id, noHistory.id, quiet.id].sort(),
  );
  for (const c of gwView) {
    expect([c.id, c.readable]).toEqual([c.id, can(c.id).every((bit) => bit === true)]);
    expect(c.lastMessageId).toBe(lastId(c.id) ?? null);
  }
  expect(lastId(s.general.id)).toBe(lastIds.general);
  expect(lastId(s.thread.id)).toBe(lastIds.thread);
  expect(lastId(priv.id)).toBe(lastIds.priv);
  expect(lastId(quiet.id)).toBeNull();
  // Asking anyway: Missing Access where the bot cannot view, nothing where it cannot read history.
  await expect(s.client.rest.get(Routes.channelMessages(hidden.id))).rejects.toMatchObject({
    status: 403,
    code: 50001,
  });
  s.fake.message(noHistory.id, { author: s.ann, content: "unreadable", dispatch: false });
  expect(await s.client.rest.get(Routes.channelMessages(noHistory.id))).toEqual([]);
});

test("opening a DM returns the existing channel with its last message id", async () => {
  const s = await setUp();
  const last = s.fake.message(s.dm.id, { author: s.ann, content: "hello", dispatch: false }).id;
  const bob = s.fake.user({ username: "bob" });
  await s.login();
  const open = (recipient_id: string) =>
    s.client.rest.post(Routes.userChannels(), { body: { recipient_id } }) as Promise<{
      id: string;
      type: number;
      last_message_id: string | null;
      recipients: { id: string }[];
    }>;
  expect(await open(s.ann.id)).toMatchObject({
    id: s.dm.id,
    type: 1,
    last_message_id: last,
    recipients: [{ id: s.ann.id }],
  });
  const fresh = await open(bob.id);
  expect(fresh).toMatchObject({ type: 1, last_message_id: null, recipients: [{ id: bob.id }] });
  expect((await open(bob.id)).id).toBe(fresh.id);
});

test("history pages newest first: no anchor, before, and after (the ones right after it)", async () => {
  const s = await setUp();
  const made = Array.from(
    { length: 7 },
    (_, i) => s.fake.message(s.general.id, { author: s.ann, content: `m${i}`, dispatch: false }).id as string,
  );
  const ids = (...at: number[]) => at.map((i) => made[i] as string);
  await s.login();
  const page = async (query: Record<string, string>) =>
    (
      (await s.client.rest.get(Routes.channelMessages(s.general.id), {
        query: new URLSearchParams(query),
      })) as { id: string }[]
    ).map((m) => m.id);
  const [fourth, second, sixth] = ids(4, 1, 5) as [string, string, string];
  expect(await page({ limit: "3" })).toEqual(ids(6, 5, 4));
  expect(await page({ limit: "3", before: fourth })).toEqual(ids(3, 2, 1));
  expect(await page({ limit: "3", after: second })).toEqual(ids(4, 3, 2));
  expect(await page({ limit: "100", after: sixth })).toEqual(ids(6));
});
