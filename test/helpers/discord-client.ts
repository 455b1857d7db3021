/**
 * A plain discord.js Client (gw's connector aside) pointed at a fake Discord, for the tests that check
 * the fake speaks Discord as discord.js reads it: the intents gw asks for (guilds, guild and direct
 * messages, message content), the Channel partial for DMs, REST at the fake (2 s timeout, no retries,
 * `rest` added), no identify throttling. `fakeDiscordClients()` is called once per test file: it
 * registers an afterEach that destroys every client it made and stops that client's fake.
 */
import { afterEach } from "bun:test";
import { Client, Events, GatewayIntentBits, Partials, type RESTOptions } from "discord.js";
import { FAKE_BOT_TOKEN, type FakeDiscord } from "../../src/demo/fake-discord/server.ts";

export function fakeDiscordClients() {
  const open: { fake: FakeDiscord; client: Client }[] = [];
  afterEach(async () => {
    for (const { fake, client } of open.splice(0)) {
      await client.destroy();
      await fake.stop();
    }
  });
  return (fake: FakeDiscord, rest: Partial<RESTOptions> = {}): Client => {
    const client = new Client({
      intents: [
        GatewayIntentBits.Guilds,
        GatewayIntentBits.GuildMessages,
        GatewayIntentBits.DirectMessages,
        GatewayIntentBits.MessageContent,
      ],
      partials: [Partials.Channel],
      rest: { api: fake.apiUrl, timeout: 2_000, retries: 0, ...rest },
      ws: { buildIdentifyThrottler: async () => ({ waitForIdentify: async () => {} }) },
    });
    open.push({ fake, client });
    return client;
  };
}

/** Logs `client` in; settles at clientReady, or with the login's refusal. */
export const loginReady = (client: Client, token = FAKE_BOT_TOKEN): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    client.once(Events.ClientReady, () => resolve());
    client.login(token).catch(reject);
  });
