/**
 * The fake Discord is only worth its tests if discord.js accepts it as Discord: a plain discord.js
 * Client (gw's connector aside) reaches clientReady with its caches filled, builds Message objects for
 * guild, thread and DM messages (the DM through the Channel partial and `channel_type`), gets the
 * replay of a resume, is refused with the documented close codes, and honours the rate-limit headers.
 */
import { afterEach, expect, test } from "bun:test";
import {
  Client,
  Events,
  GatewayIntentBits,
  type Message,
  Partials,
  RateLimitError,
  Routes,
} from "discord.js";
import { FAKE_BOT_TOKEN, type FakeDiscord, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { waitFor } from "../helpers/process.ts";

const open: { fake: FakeDiscord; client: Client }[] = [];
afterEach(async () => {
  for (const { fake, client } of open.splice(0)) {
    await client.destroy();
    await fake.stop();
  }
});

async function setUp(opts: { token?: string; messageContentIntent?: boolean; rejectAfterMs?: number } = {}) {
  const fake = await startFakeDiscord({ messageContentIntent: opts.messageContentIntent ?? true });
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const guild = fake.guild({ name: "Home" });
  const general = fake.channel(guild.id, { name: "general" });
  const thread = fake.thread(guild.id, general.id, { name: "plans" });
  const dm = fake.dm(ann);
  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.DirectMessages,
      GatewayIntentBits.MessageContent,
    ],
    partials: [Partials.Channel],
    rest: {
      api: fake.apiUrl,
      timeout: 2_000,
      retries: 0,
      ...(opts.rejectAfterMs
        ? { rejectOnRateLimit: (i) => i.timeToReset > (opts.rejectAfterMs as number) }
        : {}),
    },
    ws: { buildIdentifyThrottler: async () => ({ waitForIdentify: async () => {} }) },
  });
  open.push({ fake, client });
  const messages: Message[] = [];
  client.on(Events.MessageCreate, (m) => {
    if (m.author.id !== client.user?.id) messages.push(m);
  });
  const login = () =>
    new Promise<void>((resolve, reject) => {
      client.once(Events.ClientReady, () => resolve());
      client.login(opts.token ?? FAKE_BOT_TOKEN).catch(reject);
    });
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
