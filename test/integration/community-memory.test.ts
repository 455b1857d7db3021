/**
 * The Discord connector's memory stays bounded (issue hardening, item 6), with the real discord.js
 * against the fake Discord: discord.js caches no messages and no users or members but the bot's own,
 * however many arrive (its defaults keep 200 messages per channel and everyone it ever saw); and inbound
 * attachment downloads run at most INBOUND_FILES_AT_ONCE at a time, however many messages bring files.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { INBOUND_FILES_AT_ONCE } from "../../src/connectors/connector.ts";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";
import { AGENT } from "../helpers/service.ts";

const discord = fakeDiscords();
const servers: { stop(force?: boolean): unknown }[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) s.stop(true);
});

describe("discord.js caches", () => {
  test("300 messages from 30 users in 3 channels leave no message, user or member cached but the bot's", async () => {
    const fake = await discord.start();
    const guild = fake.guild({ name: "Busy" });
    const channels = [0, 1, 2].map((i) => fake.channel(guild.id, { name: `c${i}` }));
    const users = Array.from({ length: 30 }, (_, i) =>
      fake.user({ username: `user${i}`, global_name: null }),
    );
    const { openDiscordLink } = await import("../../src/connectors/community-chat/discord-link.ts");
    let seen = 0;
    const link = openDiscordLink(
      {
        token: FAKE_BOT_TOKEN,
        apiUrl: fake.apiUrl,
        restTimeoutMs: 1_000,
        restRetries: 0,
        maxRateLimitWaitMs: 1_000,
        throttleIdentify: false,
      },
      {
        message: () => {
          seen += 1;
        },
        session: () => {},
        guild: () => {},
        change: () => {},
        rename: () => {},
        ready: () => {},
        reconnecting: () => {},
        closedForGood: () => {},
        warn: () => {},
      },
    );
    try {
      await link.login();
      for (let i = 0; i < 300; i++)
        fake.message((channels[i % 3] as { id: string }).id, {
          author: users[i % 30] as (typeof users)[number],
          content: `m${i}`,
        });
      await waitFor(() => (seen === 300 ? true : undefined), "300 messages through discord.js");
      const sizes = link.cacheSizes();
      expect(sizes).toMatchObject({ guilds: 1, messages: 0 });
      expect(sizes.users).toBeLessThanOrEqual(1);
      expect(sizes.members).toBeLessThanOrEqual(1);
      expect(sizes.channels).toBeGreaterThanOrEqual(3);
    } finally {
      await link.destroy();
    }
  });
});

describe("attachment downloads", () => {
  test(`12 files in 3 messages: at most ${INBOUND_FILES_AT_ONCE} downloads at once, all stored`, async () => {
    let active = 0;
    let most = 0;
    let served = 0;
    const cdn = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async () => {
        active += 1;
        most = Math.max(most, active);
        await Bun.sleep(40);
        active -= 1;
        served += 1;
        return new Response("bytes", { headers: { "content-type": "image/png" } });
      },
    });
    servers.push(cdn);
    const { fake, ann, general } = await discord.home();
    const gw = await communityService(fake, { allowlist: allowAnn(ann.id) });
    for (let m = 0; m < 3; m++)
      fake.message(general.id, {
        author: ann,
        content: `photos ${m}`,
        attachments: Array.from({ length: 4 }, (_, i) => ({
          filename: `p${m}-${i}.png`,
          url: `http://127.0.0.1:${cdn.port}/p${m}-${i}.png`,
          size: 5,
        })),
      });
    const messages = await waitFor(async () => {
      const res = await gw.request("GET", "/messages/unread", { headers: AGENT });
      const list = ((await res.json()) as { messages: { attachments: unknown[] }[] }).messages;
      return list.length === 3 ? list : undefined;
    }, "the three messages");
    expect(messages.map((m) => m.attachments.length)).toEqual([4, 4, 4]);
    expect(served).toBe(12);
    expect(most).toBeLessThanOrEqual(INBOUND_FILES_AT_ONCE);
    expect(most).toBeGreaterThan(1);
  });
});
