/**
 * Bounded under faults (extensions.md §4), through the real Discord connector (the fake Discord and
 * discord.js): while the store cannot write, live messages wait in their channels' queues up to
 * GW_COMMUNITY_QUEUE_MAX; past it they are dropped (no download started) and, once the store writes again,
 * fetched from Discord's history: every message stored exactly once. Health says how many are held.
 * (`bun run faults community-queue` runs the long form on a real `gw serve`: 30 s at 100 messages/s, RSS.)
 */
import { expect, test } from "bun:test";
import { faultyStore } from "../fakes/faulty-store.ts";
import { allowAnn, communityService } from "../helpers/community.ts";
import { fakeDiscords } from "../helpers/fake-discord.ts";
import { waitFor } from "../helpers/process.ts";

const discord = fakeDiscords();

const MAX = 40;
const PER_CHANNEL = 150;

test("a store that cannot write: at most GW_COMMUNITY_QUEUE_MAX held, the rest fetched from history afterwards, each stored once", async () => {
  const { fake, ann, guild, general } = await discord.home();
  const random = fake.channel(guild.id, { name: "random" });
  const store = faultyStore();
  const gw = await communityService(fake, {
    allowlist: allowAnn(ann.id),
    openStore: store.open,
    env: { GW_COMMUNITY_QUEUE_MAX: String(MAX), GW_COMMUNITY_CATCHUP_MAX_MESSAGES: "1000" },
    tuning: { ingestRetryMaxMs: 100 },
  });
  const count = (sql: string) => (gw.svc.store.db.query(sql).get() as { n: number }).n;
  fake.message(general.id, { author: ann, content: "before" });
  await waitFor(
    () => (count("SELECT COUNT(*) AS n FROM messages") === 1 ? true : undefined),
    "the first message",
  );

  store.fail("write");
  const heldSeen: number[] = [];
  const sample = async () => {
    const m = /\((\d+) held/.exec((await gw.health()).detail);
    if (m) heldSeen.push(Number(m[1]));
  };
  for (let i = 0; i < PER_CHANNEL; i++) {
    fake.message(general.id, { author: ann, content: `general ${i}` });
    fake.message(random.id, { author: ann, content: `random ${i}` });
    if (i % 10 === 0) await sample();
  }
  await waitFor(async () => {
    await sample();
    return heldSeen.at(-1) === MAX ? true : undefined;
  }, "the bound reached");
  expect((await gw.health()).state).toBe("degraded");
  expect((await gw.health()).detail).toMatch(/dropped past GW_COMMUNITY_QUEUE_MAX are fetched again later/);
  expect(Math.max(...heldSeen)).toBeLessThanOrEqual(MAX);
  expect(count("SELECT COUNT(*) AS n FROM messages")).toBe(1);

  store.heal();
  const total = 1 + 2 * PER_CHANNEL;
  await waitFor(
    () => (count("SELECT COUNT(*) AS n FROM messages") === total ? true : undefined),
    `${total} messages stored`,
    20_000,
  );
  await gw.untilState("ok");
  expect(count("SELECT COUNT(DISTINCT platform_id) AS n FROM messages")).toBe(total);
  const texts = (gw.svc.store.db.query("SELECT text FROM messages").all() as { text: string }[]).map(
    (r) => r.text,
  );
  for (let i = 0; i < PER_CHANNEL; i++) {
    expect(texts).toContain(`general ${i}`);
    expect(texts).toContain(`random ${i}`);
  }
}, 40_000);
