/**
 * Child process of bench/soak/soak.ts: the fake Discord (src/demo/fake-discord) in a process of its own, so
 * that the history it keeps for every message (it serves REST history and resumes from it) counts in
 * neither gw's RSS nor the benchmark's. It builds the world, then posts messages when told.
 *
 *   BENCH_SEED=1 BENCH_CHANNELS=2000 bun run bench/soak/discord.ts
 *
 * World: BENCH_USERS users (BENCH_ALLOWED_USERS of them to be allowlisted, about one in three with a
 * server nickname), 10 guilds holding the text channels and one DM channel per 20 channels (every
 * other one with an allowlisted user while they last), BENCH_CHANNELS channels in all. Message k goes to a Zipf-like channel (s = 0.5);
 * in a guild its author is an allowlisted user with probability BENCH_ALLOWED_PCT % (else one of the
 * others, Zipf-like: a few talk a lot), in a DM the DM's user; 5 % reply to the channel's previous
 * message; BENCH_ATTACH_PER_MILLE ‰ carry one small file (0.2–4 KiB, served by the fake's CDN).
 *
 * Prints `{"ready":0,"apiUrl","allowed":[user ids],"pid"}`. Commands besides those of
 * lib/child-protocol.ts: `{"cmd":"run","from","n","rps"}` posts messages [from, from + n) as
 * MESSAGE_CREATEs, message j at start + j × 1000 / rps, and answers {posted, allowed, attachments,
 * lateMs: {p50, p99, max}}.
 */
import { type FakeUser, startFakeDiscord } from "../../src/demo/fake-discord/server.ts";
import { emit, now, serveCommands } from "../lib/child-protocol.ts";
import { intEnv, SEED } from "../lib/settings.ts";
import { dist, mulberry32, zipfPicker } from "../lib/stats.ts";
import { textFor } from "./world.ts";

const CHANNELS = intEnv("BENCH_CHANNELS", 2000, 2);
const USERS = intEnv("BENCH_USERS", 400, 2);
const ALLOWED_USERS = Math.min(USERS - 1, intEnv("BENCH_ALLOWED_USERS", 40, 1));
const ALLOWED_PCT = intEnv("BENCH_ALLOWED_PCT", 20, 0);
const ATTACH_PER_MILLE = intEnv("BENCH_ATTACH_PER_MILLE", 10, 0);
const GUILDS = 10;

const random = mulberry32(SEED + 1000);
const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
const users = Array.from({ length: USERS }, (_, i) =>
  fake.user({ username: `user${i}`, global_name: i % 4 === 0 ? null : `User ${i}` }),
);
const nick = new Map(users.filter((_, i) => i % 3 === 0).map((u) => [u.id, `nick-${u.username}`]));
const allowed = users.slice(0, ALLOWED_USERS);
const others = users.slice(ALLOWED_USERS);
const allowedIds = new Set(allowed.map((u) => u.id));

interface Chan {
  id: string;
  /** The DM's user, or null for a guild channel. */
  dm: FakeUser | null;
}
const dmCount = Math.max(1, Math.floor(CHANNELS / 20));
const guilds = Array.from({ length: GUILDS }, (_, g) => fake.guild({ name: `guild-${g}` }));
const channels: Chan[] = [];
for (let i = 0; i < CHANNELS - dmCount; i++) {
  const guild = guilds[i % GUILDS] as { id: string };
  channels.push({ id: fake.channel(guild.id, { name: `room-${i}` }).id, dm: null });
}
for (let i = 0; i < dmCount; i++) {
  const user = (
    i % 2 === 0 && i / 2 < allowed.length ? allowed[i / 2] : others[i % others.length]
  ) as FakeUser;
  channels.push({ id: fake.dm(user).id, dm: user });
}
const pickChannel = zipfPicker(channels.length, 0.5, random);
const pickOther = zipfPicker(others.length, 0.8, random);
const lastIn = new Map<string, string>();
let next = 0;

emit({
  ready: 0,
  apiUrl: fake.apiUrl,
  allowed: [...allowedIds],
  channels: channels.length,
  pid: process.pid,
});

function post(k: number): { allowed: boolean; attachment: boolean } {
  const c = channels[pickChannel()] as Chan;
  const author =
    c.dm ??
    (random() * 100 < ALLOWED_PCT
      ? (allowed[Math.floor(random() * allowed.length)] as FakeUser)
      : (others[pickOther()] as FakeUser));
  const ok = allowedIds.has(author.id);
  const text = textFor("d", k, ok, random);
  const reply = random() < 0.05 ? lastIn.get(c.id) : undefined;
  const attach = random() * 1000 < ATTACH_PER_MILLE;
  const size = 200 + Math.floor(random() * 3900);
  const png = random() < 0.7;
  const m = fake.message(c.id, {
    author,
    content: text,
    ...(c.dm ? {} : { nick: nick.get(author.id) ?? null }),
    ...(reply ? { replyTo: reply } : {}),
    ...(attach
      ? {
          attachments: [
            {
              filename: png ? `photo-${k}.png` : `note-${k}.txt`,
              contentType: png ? "image/png" : "text/plain",
              data: new Uint8Array(size).fill(k & 0xff),
            },
          ],
        }
      : {}),
  });
  lastIn.set(c.id, m.id as string);
  return { allowed: ok, attachment: attach };
}

await serveCommands(
  () => fake.stop(),
  async (c) => {
    if (c.cmd !== "run") return { error: `unknown command ${c.cmd}` };
    const from = Number(c.from);
    const n = Number(c.n);
    if (from !== next) return { error: `run from ${from}, next is ${next}` };
    const gapMs = 1000 / Number(c.rps);
    const t0 = now();
    const late: number[] = [];
    let ok = 0;
    let files = 0;
    for (let j = 0; j < n; j++) {
      const due = t0 + j * gapMs;
      const wait = due - now();
      if (wait > 0) await Bun.sleep(wait);
      late.push(now() - due);
      const r = post(from + j);
      if (r.allowed) ok++;
      if (r.attachment) files++;
    }
    next = from + n;
    const d = dist(late);
    return { posted: n, allowed: ok, attachments: files, lateMs: { p50: d.p50, p99: d.p99, max: d.max } };
  },
);
