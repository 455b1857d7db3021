/**
 * Benchmark: "Load held" (reliability.md §8.1, issue "evidence" item 4): BENCH_DURATION_S of mixed load
 * against one gw, with both connectors and webhooks on, and the invariants checked afterwards.
 *
 *   bun run bench load          (or: bun run bench/load.ts)
 *
 * Processes (none shares another's event loop but the fake Discord, which this script hosts as
 * bench/discord.ts does):
 * - gw (bench/load-gw.ts), built as `gw serve` builds it: the iMessage connector on a chat.db with
 *   file-change notifications, iMessage sends through the Messages stand-in (src/demo/messages-standin.ts
 *   run by a GW_OSASCRIPT_PATH script, one process per send, as test/helpers/device.ts does), the
 *   Discord connector logged in to the fake Discord (src/demo/fake-discord), webhooks to the sink;
 * - Messages (bench/load-writer.ts) writing chat.db;
 * - the webhook sink (bench/webhooks-sink.ts, lib/sink.ts);
 * - the load generator (bench/load-agents.ts): BENCH_AGENTS agents, each repeating "unread page →
 *   context around one message of it → mark the page read" every period (BENCH_API_RPS requests/s in
 *   all when every page is full), and BENCH_SEND_RPS sends spread evenly over the BENCH_CHANNELS
 *   channels (half iMessage, half Discord), every one with its own Idempotency-Key, kept under the
 *   per-channel rate limit set here (a 429 counts as an error);
 * - this script: the fake Discord, Discord inbound (MESSAGE_CREATE), the sampler (gw's RSS and the
 *   WAL's size every second) and the audit.
 * Inbound: BENCH_INBOUND_RPS messages/s in all, half as chat.db rows, half as MESSAGE_CREATEs; on each
 * platform every other message is from an allowlisted sender, so its webhook fires.
 *
 * Before the load, gw.db is seeded with BENCH_HISTORY messages of the same channels through
 * createIngest (the normal write path, webhooks off), so pages are full and context has neighbours.
 * Agents alternate between two read states: even ones have read nothing (they work through the
 * history, full pages), odd ones have read all of it (they follow the live messages, short pages).
 * Then one message per channel primes every channel end to end (stored and delivered) before t0.
 *
 * After the load: wait (≤ BENCH_DRAIN_S) until every inbound message is stored, every webhook delivered
 * and none pending; then the audit, from gw's own connection (load-gw.ts `audit`), the sink's records,
 * the fake's posts, chat.db's own rows and the stand-in's call log: every inbound message stored
 * exactly once with the right allowlist status; one delivery per allowed message, received once,
 * signature valid; every accepted send stored once and posted exactly once on its platform.
 *
 * Environment: BENCH_DURATION_S (60), BENCH_AGENTS (20), BENCH_CHANNELS (50), BENCH_INBOUND_RPS (50),
 * BENCH_SEED (1), BENCH_API_RPS (600: the agents' planned request rate), BENCH_SEND_RPS (10),
 * BENCH_WARMUP_S (10: RSS growth is measured after it), BENCH_HISTORY (sized so the backlog agents
 * cannot run out), BENCH_DRAIN_S (30), BENCH_QUIET_WAIT_S (60: wait for the machine to be under 10%
 * busy first), BENCH_MAX_OTHER_PCT (15) and BENCH_ATTEMPTS (3: the whole run is repeated while other
 * processes used more than that share of the CPUs during the load; the quietest attempt is reported),
 * BENCH_KEEP (0). Method: bench/README.md.
 */
import { Database } from "bun:sqlite";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AllowlistEntry, buildAllowlist } from "../src/allowlist/parse.ts";
import { decodeAttributedBody } from "../src/connectors/device-messenger/typedstream.ts";
import type { Source } from "../src/core/envelope.ts";
import { createIdFactory } from "../src/core/ids.ts";
import type { Logger } from "../src/core/ports.ts";
import type { ChatSpec } from "../src/demo/chatdb-writer.ts";
import {
  FAKE_BOT_TOKEN,
  type FakeDiscord,
  type FakeUser,
  startFakeDiscord,
} from "../src/demo/fake-discord/server.ts";
import { DISCORD_EPOCH } from "../src/demo/fake-discord/world.ts";
import { createIngest, type NormalizedMessage } from "../src/ingest/ingest.ts";
import { openStore } from "../src/store/store.ts";
import { standInProgram } from "../test/helpers/process.ts";
import { chatDbPathIn, gwEnvFor } from "./lib/chatdb.ts";
import { startChild } from "./lib/child.ts";
import { now } from "./lib/child-protocol.ts";
import { machineBusyMs, waitQuiet, withMachineLoad } from "./lib/machine.ts";
import { procCpuMs, sampleProc, slope } from "./lib/proc.ts";
import { report, type SummaryRow } from "./lib/report.ts";
import { startSession } from "./lib/session.ts";
import { Sink } from "./lib/sink.ts";
import { dist, intEnv, median, mulberry32 } from "./lib/stats.ts";
import type { LoadResult, LoadSpec, RouteFigures } from "./load-agents.ts";

// ---------------------------------------------------------------------------------------------------
// Configuration

const DURATION_S = intEnv("BENCH_DURATION_S", 60, 5);
const AGENTS = intEnv("BENCH_AGENTS", 20, 1);
const CHANNELS = intEnv("BENCH_CHANNELS", 50, 2);
const INBOUND_RPS = intEnv("BENCH_INBOUND_RPS", 50, 0);
const SEED = intEnv("BENCH_SEED", 1, 0);
const API_RPS = intEnv("BENCH_API_RPS", 600, 1);
const SEND_RPS = intEnv("BENCH_SEND_RPS", 10, 0);
const WARMUP_S = Math.min(intEnv("BENCH_WARMUP_S", 10, 0), DURATION_S - 2);
const DRAIN_S = intEnv("BENCH_DRAIN_S", 30, 1);
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 60, 0);
const KEEP = intEnv("BENCH_KEEP", 0, 0) === 1;
/** The whole run is repeated (ATTEMPTS in all, at most) while other processes used more of the CPUs. */
const MAX_OTHER_PCT = intEnv("BENCH_MAX_OTHER_PCT", 15, 0);
const ATTEMPTS = intEnv("BENCH_ATTEMPTS", 3, 1);
const LIMIT = 20;
const CONTEXT = 5;
/** Requests of a full agent loop: unread, context, mark_read. */
const PER_LOOP = 3;
const PERIOD_MS = (AGENTS * PER_LOOP * 1000) / API_RPS;
/** Share of the seeded history from allowlisted senders (the rest: 19% strangers, 5% the owner). */
const ALLOWED_SHARE = 0.76;
/** Enough history that an agent reading full pages all the time (prime and drain included) never runs out. */
const HISTORY = intEnv(
  "BENCH_HISTORY",
  Math.ceil((1.25 * LIMIT * (1000 / PERIOD_MS) * (DURATION_S + 15)) / ALLOWED_SHARE),
  0,
);
/** The per-channel limit gw runs with: at least twice the per-channel send rate (GW_ default 1/s, burst 5). */
const RATE_PER_CHANNEL = Math.max(1, Math.ceil((2 * SEND_RPS) / CHANNELS));
const RATE_BURST = 5;
/** reliability.md §8.1: L1 (rate, p99, errors), L2 (send p99), L5 (RSS growth, WAL, errors). */
const TARGET = { rps: 500, p99Ms: 50, sendP99Ms: 100, rssGrowthPct: 20, walMiB: 64 };
const IN_PREFIX = "in-";
const OUT_PREFIX = "out-";

const HERE = import.meta.dir;
const _ROOT = join(HERE, "..");
const PATH = process.env.PATH ?? "/usr/bin:/bin";
const progress = (s: string) => process.stderr.write(`[load] ${s}\n`);
const startedAt = performance.now();
const TOKEN = `bench-${crypto.randomUUID()}`;
const SECRET = `whsec-${crypto.randomUUID()}`;
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const fmt = (x: number) => x.toLocaleString("en-US");
const MiB = 1024 * 1024;

const session = startSession(progress, KEEP);
const fakes = new Set<FakeDiscord>();
process.on("exit", () => {
  for (const f of fakes) void f.stop();
});

// ---------------------------------------------------------------------------------------------------
// The world: people, chats and channels

interface Person {
  id: string;
  name: string;
  allowed: boolean;
  user?: FakeUser;
}

interface Channel {
  /** gw's channel id. */
  id: string;
  source: Source;
  type: "dm" | "group";
  platformRef: string;
  /** Who writes in it: the allowlisted member and the stranger (a DM has one of them). */
  friend: Person | null;
  stranger: Person | null;
}

/** People per platform and kind: one per channel, so no two DM channels are the same chat. */
const IM_CHANNELS = Math.ceil(CHANNELS / 2);
const DC_CHANNELS = CHANNELS - IM_CHANNELS;
const PEOPLE = Math.max(IM_CHANNELS, DC_CHANNELS);
const phone = (base: number, i: number) => `+1555${String(base + i).padStart(7, "0")}`;

/** People, chats, channels and the allowlist of one attempt, on its fake Discord. */
function buildWorld(fake: FakeDiscord) {
  const imFriends: Person[] = Array.from({ length: PEOPLE }, (_, i) => ({
    id: phone(2_000_100, i),
    name: `Friend ${i}`,
    allowed: true,
  }));
  const imStrangers: Person[] = Array.from({ length: PEOPLE }, (_, i) => ({
    id: phone(7_000_100, i),
    name: `Stranger ${i}`,
    allowed: false,
  }));
  const dcFriends: Person[] = Array.from({ length: PEOPLE }, (_, i) => {
    const user = fake.user({ username: `member${i}`, global_name: `Member ${i}` });
    return { id: user.id, name: `Member ${i}`, allowed: true, user };
  });
  const dcStrangers: Person[] = Array.from({ length: PEOPLE }, (_, i) => {
    const user = fake.user({ username: `visitor${i}`, global_name: null });
    return { id: user.id, name: `visitor${i}`, allowed: false, user };
  });
  const guild = fake.guild({ name: "bench" });

  /** iMessage: every fifth chat a DM with a friend, the next a DM with a stranger, the others groups of both. */
  const imChannels: Channel[] = Array.from({ length: IM_CHANNELS }, (_, i): Channel => {
    const friend = imFriends[i] as Person;
    const stranger = imStrangers[i] as Person;
    if (i % 5 === 0 || i % 5 === 1) {
      const who = i % 5 === 0 ? friend : stranger;
      return {
        id: who.id,
        source: "device_messenger",
        type: "dm",
        platformRef: `iMessage;-;${who.id}`,
        friend: i % 5 === 0 ? friend : null,
        stranger: i % 5 === 1 ? stranger : null,
      };
    }
    const guid = `iMessage;+;chat${String(100_000_000 + i * 7919)}`;
    return { id: guid, source: "device_messenger", type: "group", platformRef: guid, friend, stranger };
  });
  const dcChannels: Channel[] = Array.from({ length: DC_CHANNELS }, (_, i): Channel => {
    const { id } = fake.channel(guild.id, { name: `room-${i}` });
    return {
      id: `community_chat:channel:${id}`,
      source: "community_chat",
      type: "group",
      platformRef: id,
      friend: dcFriends[i] as Person,
      stranger: dcStrangers[i] as Person,
    };
  });
  const channels = [...imChannels, ...dcChannels];
  if (new Set(channels.map((c) => c.id)).size !== CHANNELS) throw new Error("two channels share an id");

  const chats: ChatSpec[] = imChannels.map((c) =>
    c.type === "dm"
      ? { guid: c.platformRef, style: 45, chatIdentifier: c.id, participants: [c.id] }
      : {
          guid: c.platformRef,
          style: 43,
          chatIdentifier: c.platformRef.split(";").at(-1) as string,
          participants: [(c.friend as Person).id, (c.stranger as Person).id],
        },
  );
  const allowEntries: AllowlistEntry[] = [
    ...imFriends.map((p, i) => ({
      source: "device_messenger" as Source,
      id: p.id,
      person_id: `person-${i}`,
      display_name: p.name,
    })),
    ...dcFriends.map((p, i) => ({
      source: "community_chat" as Source,
      id: p.id,
      person_id: `person-${i}`,
      display_name: p.name,
    })),
  ];
  const allowlistToml = allowEntries
    .map(
      (e) =>
        `[[entry]]\nsource = "${e.source}"\nid = "${e.id}"\nperson_id = "${e.person_id}"\ndisplay_name = "${e.display_name}"\n`,
    )
    .join("\n");
  return { imChannels, dcChannels, channels, chats, allowEntries, allowlistToml };
}

type World = ReturnType<typeof buildWorld>;

/** A sender for a message in this channel: the friend when `allowed` and there is one, else the stranger. */
function senderIn(c: Channel, allowed: boolean): Person | null {
  return allowed ? c.friend : c.stranger;
}

/** Channels where a message of this kind can come from (a DM only has its own person). */
const compatible = (list: readonly Channel[], allowed: boolean) =>
  list.filter((c) => senderIn(c, allowed) !== null);

// ---------------------------------------------------------------------------------------------------
// History: seeded through createIngest, webhooks off

const WORDS =
  "ok yes no maybe later tonight tomorrow dinner meeting call back see you soon thanks great sounds good where are we the a on at is it running late almost there can you send me file link photo address when what why how love this lol nice".split(
    " ",
  );

const silent: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silent,
};

function seedHistory(
  world: World,
  dbPath: string,
  random: () => number,
): {
  messages: number;
  allowed: number;
  unknown: number;
  outbound: number;
  ms: number;
  dbBytes: number;
  marks: number;
} {
  const t0 = performance.now();
  const store = openStore(dbPath);
  const { channels } = world;
  const allowlist = buildAllowlist(world.allowEntries);
  let clockNow = Date.now();
  const clock = { now: () => clockNow };
  const ingest = createIngest({
    store,
    allowlist: () => allowlist,
    ids: createIdFactory(clock),
    clock,
    webhooksEnabled: false,
    attachmentDir: join(dbPath, "../attachments"),
    log: silent,
  });
  const end = Date.now() - 10 * 60_000;
  const start = end - 7 * 86_400_000;
  const gap = (end - start) / Math.max(1, HISTORY);
  const counts = { allowed: 0, unknown: 0, outbound: 0 };
  const batches: Record<Source, NormalizedMessage[]> = { device_messenger: [], community_chat: [] };
  const flush = (source: Source) => {
    const messages = batches[source];
    if (messages.length === 0) return;
    clockNow = messages[messages.length - 1]?.timestampMs ?? clockNow;
    ingest({ source, messages, cursor: null });
    batches[source] = [];
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  for (let i = 0; i < HISTORY; i++) {
    const ts = Math.round(start + i * gap);
    const roll = random();
    const kind = roll < 0.05 ? "outbound" : roll < 0.05 + ALLOWED_SHARE ? "allowed" : "unknown";
    const channel = kind === "outbound" ? pick(channels) : pick(compatible(channels, kind === "allowed"));
    const person = kind === "outbound" ? null : senderIn(channel, kind === "allowed");
    const words = 2 + Math.floor(random() * 20);
    let text = pick(WORDS);
    for (let w = 1; w < words; w++) text += ` ${pick(WORDS)}`;
    const im = channel.source === "device_messenger";
    batches[channel.source].push({
      source: channel.source,
      platformId: im
        ? crypto.randomUUID().toUpperCase()
        : (((BigInt(ts) - DISCORD_EPOCH) << 22n) | BigInt(i & 0xfff)).toString(),
      channel: { id: channel.id, type: channel.type, platformRef: channel.platformRef },
      sender: person ? { id: person.id, displayName: person.name } : { id: "me", displayName: "Me" },
      text,
      replyToPlatformId: null,
      timestampMs: ts,
      attachments: [],
      raw: im ? { seeded: i, service: "iMessage" } : { seeded: i, channel_id: channel.platformRef },
      direction: kind === "outbound" ? "outbound" : "inbound",
    });
    counts[kind]++;
    if (batches[channel.source].length >= 500) flush(channel.source);
  }
  flush("device_messenger");
  flush("community_chat");

  // Odd agents have read the whole history: raw read marks, then the store's own rebuildRuns.
  const allowedIds = store.db
    .query<{ id: string }, []>("SELECT id FROM messages WHERE allowlist_status = 'allowed'")
    .all()
    .map((r) => r.id);
  const mark = store.db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3)",
  );
  let marks = 0;
  for (const agent of agentNames.filter((_, i) => i % 2 === 1)) {
    store.db.transaction(() => {
      for (const id of allowedIds) mark.run(id, agent, end);
    })();
    marks += allowedIds.length;
    store.reads.rebuildRuns(agent);
  }
  mark.finalize();
  store.close();
  return {
    messages: HISTORY,
    ...counts,
    marks,
    ms: Math.round(performance.now() - t0),
    dbBytes: statSync(dbPath).size,
  };
}

const agentNames = Array.from({ length: AGENTS }, (_, i) => `agent-${String(i).padStart(2, "0")}`);

// ---------------------------------------------------------------------------------------------------
// Inbound plan

interface Inbound {
  text: string;
  channel: Channel;
  from: Person;
}

/** Message j of a platform: every other one from an allowlisted sender, in a channel where that sender writes. */
function inboundPlan(list: readonly Channel[], n: number, tag: string, random: () => number): Inbound[] {
  const friendly = compatible(list, true);
  const strange = compatible(list, false);
  return Array.from({ length: n }, (_, j) => {
    const allowed = j % 2 === 0;
    const pool = allowed ? friendly : strange;
    const channel = pool[Math.floor(random() * pool.length)] as Channel;
    return { text: `${IN_PREFIX}${tag}-${j}`, channel, from: senderIn(channel, allowed) as Person };
  });
}

// ---------------------------------------------------------------------------------------------------
// Run

/** gw.db-wal's size, 0 when it does not exist. */
function walBytes(dbPath: string): number {
  try {
    return statSync(`${dbPath}-wal`).size;
  } catch {
    return 0;
  }
}

interface Sample {
  t: number;
  rssMiB: number;
  walMiB: number;
  sinkN: number;
  /** gw's CPU over the second before the sample, % of one core. */
  gwPct: number;
  /** Other processes' CPU over that second, % of all cores (machine busy minus ours). */
  otherPct: number | null;
}

interface Attempt {
  summary: SummaryRow[];
  lines: string[];
  results: Record<string, unknown>;
  /** Other processes' CPU over the load, % of all cores (null off Linux). */
  otherPct: number | null;
}

async function attempt(): Promise<Attempt> {
  const random = mulberry32(SEED);
  const dir = session.tempDir("gw-bench-load-");
  const chatDbPath = chatDbPathIn(dir);
  const dbPath = join(dir, "data/gw.db");
  const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
  fakes.add(fake);
  const world = buildWorld(fake);
  const { channels, imChannels, dcChannels, chats } = world;
  writeFileSync(join(dir, "allowlist.toml"), world.allowlistToml);
  progress(
    `${CHANNELS} channels (${IM_CHANNELS} iMessage, ${DC_CHANNELS} Discord), ${AGENTS} agents every ${r1(PERIOD_MS)} ms, ` +
      `${SEND_RPS} sends/s, ${INBOUND_RPS} inbound/s, ${DURATION_S} s; history ${fmt(HISTORY)} messages`,
  );
  const writer = await startChild("writer", [join(HERE, "load-writer.ts")], {
    PATH,
    BENCH_CHAT_DB: chatDbPath,
    BENCH_CHATS: JSON.stringify(chats),
  });
  const seeded = seedHistory(world, dbPath, random);
  progress(
    `seeded ${fmt(seeded.messages)} messages (${fmt(seeded.allowed)} allowed) and ${fmt(seeded.marks)} read marks in ${seeded.ms} ms`,
  );

  const sink = await Sink.start(SECRET);
  const standinLog = join(dir, "standin.log");
  const gwEnv = {
    ...gwEnvFor(dir, chatDbPath, TOKEN),
    GW_LOG_LEVEL: "info",
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
    GW_WEBHOOK_URL: sink.url,
    GW_WEBHOOK_SECRET: SECRET,
    GW_OSASCRIPT_PATH: standInProgram(dir),
    GW_STANDIN_CHAT_DB: chatDbPath,
    GW_STANDIN_LOG: standinLog,
    GW_RATE_LIMIT_PER_CHANNEL_RPS: String(RATE_PER_CHANNEL),
    GW_RATE_LIMIT_BURST: String(RATE_BURST),
    BENCH_INBOUND_PREFIX: IN_PREFIX,
    BENCH_SEND_PREFIX: OUT_PREFIX,
  };
  const gw = await startChild("gw", [join(HERE, "load-gw.ts")], gwEnv, 120_000);
  const gwPid = gw.ready.pid as number;
  const port = gw.ready.ready as number;
  const agents = await startChild("agents", [join(HERE, "load-agents.ts")], { PATH });
  progress(`gw listening on ${port} (pid ${gwPid}), both connectors ok`);

  const progressOf = async () =>
    (await gw.child.request({ cmd: "progress" })) as unknown as {
      inbound: number;
      pending: number;
      delivered: number;
      dead: number;
    };

  // Prime: one message per channel, from its friend when it has one; stored and delivered before t0.
  const prime: Inbound[] = channels.map((c, i) => ({
    text: `${IN_PREFIX}prime-${i}`,
    channel: c,
    from: (c.friend ?? c.stranger) as Person,
  }));
  for (const m of prime) {
    if (m.channel.source === "device_messenger")
      await writer.child.request({
        cmd: "commit",
        chatGuid: m.channel.platformRef,
        from: m.from.id,
        text: m.text,
      });
    else fake.message(m.channel.platformRef, { author: m.from.user as FakeUser, content: m.text });
  }
  const primeAllowed = prime.filter((m) => m.from.allowed).length;
  for (const deadline = performance.now() + 30_000; ; ) {
    const p = await progressOf();
    const s = await sink.count();
    if (p.inbound >= prime.length && p.pending === 0 && s.n >= primeAllowed) break;
    if (performance.now() > deadline)
      throw new Error(
        `prime: ${p.inbound}/${prime.length} stored, ${s.n}/${primeAllowed} delivered after 30 s`,
      );
    await Bun.sleep(50);
  }
  progress(`primed ${prime.length} channels (stored, ${primeAllowed} webhooks delivered)`);

  const perPlatform = Math.floor((INBOUND_RPS * DURATION_S) / 2);
  const imPlan = inboundPlan(imChannels, perPlatform, "im", random);
  const dcPlan = inboundPlan(dcChannels, perPlatform, "dc", random);
  const sendChannels = Array.from(
    { length: CHANNELS },
    (_, i) =>
      // Alternate platforms so both see the same send rate.
      (i % 2 === 0 ? imChannels[i >> 1] : dcChannels[i >> 1])?.id ?? (channels[i] as Channel).id,
  );

  const waitedS = await waitQuiet(QUIET_WAIT_S, progress);
  const t0 = now() + 1000;
  const tEnd = t0 + DURATION_S * 1000;
  progress(`load: ${DURATION_S} s from t0${waitedS > 0 ? ` (waited ${waitedS} s for a quiet machine)` : ""}`);

  const spec: LoadSpec = {
    port,
    token: TOKEN,
    t0: t0 + agents.child.offsetMs,
    durationMs: DURATION_S * 1000,
    agents: agentNames,
    periodMs: PERIOD_MS,
    limit: LIMIT,
    contextBefore: CONTEXT,
    contextAfter: CONTEXT,
    sendRps: SEND_RPS,
    sendChannels,
    sendPrefix: OUT_PREFIX,
    keyPrefix: `load-${crypto.randomUUID()}-`,
    timeoutMs: 10_000,
    seed: SEED,
  };

  const cpu0 = {
    gw: procCpuMs(gwPid),
    agents: procCpuMs(agents.child.proc.pid),
    writer: procCpuMs(writer.child.proc.pid),
    sink: procCpuMs(sink.child.proc.pid),
    self: process.cpuUsage(),
    machine: machineBusyMs(),
    at: now(),
  };

  const samples: Sample[] = [];
  /** All the CPU our processes used so far (gw and its reaped stand-ins, the children, this script), ms. */
  const oursMs = () => {
    const g = procCpuMs(gwPid);
    const self = process.cpuUsage();
    return (
      (g ? g.self + g.children : 0) +
      (procCpuMs(agents.child.proc.pid)?.self ?? 0) +
      (procCpuMs(writer.child.proc.pid)?.self ?? 0) +
      (procCpuMs(sink.child.proc.pid)?.self ?? 0) +
      (self.user + self.system) / 1000
    );
  };
  const sampler = (async () => {
    let prev = { at: now(), machine: machineBusyMs(), ours: oursMs(), gw: procCpuMs(gwPid)?.self ?? 0 };
    for (let s = 0; ; s++) {
      const due = t0 + s * 1000;
      if (due > tEnd + 1) return;
      const wait = due - now();
      if (wait > 0) await Bun.sleep(wait);
      const p = sampleProc(gwPid);
      const cur = { at: now(), machine: machineBusyMs(), ours: oursMs(), gw: procCpuMs(gwPid)?.self ?? 0 };
      const span = cur.at - prev.at;
      samples.push({
        t: s,
        rssMiB: r2(p.rssKiB / 1024),
        walMiB: r2(walBytes(dbPath) / MiB),
        sinkN: (await sink.count()).n,
        gwPct: r1(((cur.gw - prev.gw) / span) * 100),
        otherPct:
          cur.machine === null || prev.machine === null
            ? null
            : r1(
                (Math.max(0, cur.machine - prev.machine - (cur.ours - prev.ours)) /
                  span /
                  navigator.hardwareConcurrency) *
                  100,
              ),
      });
      prev = cur;
    }
  })();

  const discordLate: number[] = [];
  const discordInbound = (async () => {
    const gap = 1000 / (INBOUND_RPS / 2);
    for (let j = 0; j < dcPlan.length; j++) {
      const due = t0 + j * gap;
      const wait = due - now();
      if (wait > 0) await Bun.sleep(wait);
      discordLate.push(now() - due);
      const m = dcPlan[j] as Inbound;
      fake.message(m.channel.platformRef, { author: m.from.user as FakeUser, content: m.text });
    }
  })();

  const timeout = (DURATION_S + 120) * 1000;
  const [[loadMsg, writerMsg], machineLoad] = await withMachineLoad(() =>
    Promise.all([
      agents.child.request({ cmd: "run", spec }, timeout),
      writer.child.request(
        {
          cmd: "run",
          t0: t0 + writer.child.offsetMs,
          rps: INBOUND_RPS / 2,
          messages: imPlan.map((m) => [m.channel.platformRef, m.from.id, m.text]),
        },
        timeout,
      ),
      discordInbound,
      sampler,
    ]),
  );
  const load = loadMsg.result as LoadResult;
  const tLoadDone = now();
  const cpu1 = {
    gw: procCpuMs(gwPid),
    agents: procCpuMs(agents.child.proc.pid),
    writer: procCpuMs(writer.child.proc.pid),
    sink: procCpuMs(sink.child.proc.pid),
    self: process.cpuUsage(cpu0.self),
    machine: machineBusyMs(),
    at: now(),
  };
  const walEndMiB = r2(walBytes(dbPath) / MiB);
  progress(
    `load done: ${fmt(load.overall.n)} requests, ${load.overall.n - load.overall.ok} failed; writer ${JSON.stringify(writerMsg.lateMs)}`,
  );

  // Drain: every inbound message stored, every delivery made, none pending.
  const inbound = [...prime, ...imPlan, ...dcPlan];
  const allowedInbound = inbound.filter((m) => m.from.allowed);
  let drained: { ms: number; ok: boolean; last: Record<string, number> } = { ms: 0, ok: false, last: {} };
  for (const deadline = now() + DRAIN_S * 1000; ; ) {
    const p = await progressOf();
    const s = await sink.count();
    const last = { stored: p.inbound, pending: p.pending, delivered: p.delivered, dead: p.dead, sink: s.n };
    const ok = p.inbound >= inbound.length && p.pending === 0 && s.n >= allowedInbound.length;
    drained = { ms: Math.round(now() - tEnd), ok, last };
    if (ok || now() > deadline) break;
    await Bun.sleep(50);
  }
  progress(
    `drain: ${drained.ok ? "done" : "NOT done"} ${drained.ms} ms after the load ended ${JSON.stringify(drained.last)}`,
  );

  // Audit.
  const audit = (await gw.child.request({ cmd: "audit" }, 60_000)) as unknown as {
    inbound: [string, string, number][];
    deliveries: [string, string, string, number][];
    outbound: [string, string, string, string | null][];
    counts: Record<string, number>;
  };
  const arrivals = await sink.arrivals();

  const storedByText = new Map<string, { n: number; statuses: Set<string> }>();
  for (const [text, status, n] of audit.inbound) {
    const e = storedByText.get(text) ?? { n: 0, statuses: new Set<string>() };
    e.n += n;
    e.statuses.add(status);
    storedByText.set(text, e);
  }
  const expectedTexts = new Set(inbound.map((m) => m.text));
  const inboundAudit = {
    expected: inbound.length,
    storedOnce: 0,
    missing: 0,
    duplicated: 0,
    wrongStatus: 0,
    unexpected: [...storedByText.keys()].filter((t) => !expectedTexts.has(t)).length,
  };
  for (const m of inbound) {
    const e = storedByText.get(m.text);
    if (!e) inboundAudit.missing++;
    else if (e.n > 1) inboundAudit.duplicated++;
    else inboundAudit.storedOnce++;
    if (e && (e.statuses.size !== 1 || !e.statuses.has(m.from.allowed ? "allowed" : "unknown")))
      inboundAudit.wrongStatus++;
  }

  const deliveriesByText = new Map<string, [string, string, string, number][]>();
  for (const d of audit.deliveries) {
    if (!d[1].startsWith(IN_PREFIX)) continue;
    deliveriesByText.set(d[1], [...(deliveriesByText.get(d[1]) ?? []), d]);
  }
  const webhookAudit = {
    allowedInbound: allowedInbound.length,
    deliveryRows: [...deliveriesByText.values()].reduce((a, l) => a + l.length, 0),
    deliveredOnce: 0,
    notDelivered: 0,
    receivedBySink: 0,
    sinkRecords: arrivals.byId.size,
    sinkDupes: arrivals.dupes,
    sinkBadSignatures: arrivals.bad,
    forUnknownSenders: [...deliveriesByText.keys()].filter((t) => !allowedInbound.some((m) => m.text === t))
      .length,
    attemptsOverOne: audit.deliveries.filter((d) => d[3] > 1).length,
  };
  for (const m of allowedInbound) {
    const rows = deliveriesByText.get(m.text) ?? [];
    if (rows.length === 1 && rows[0]?.[2] === "delivered") webhookAudit.deliveredOnce++;
    else webhookAudit.notDelivered++;
    if (rows.some((r) => arrivals.byId.has(r[0]))) webhookAudit.receivedBySink++;
  }

  // Sends: gw's outbound rows, the fake's posts, chat.db's own rows and the stand-in's calls.
  const outboundById = new Map(audit.outbound.map((o) => [o[0], o]));
  const outboundTexts = new Map<string, number>();
  for (const o of audit.outbound) outboundTexts.set(o[1], (outboundTexts.get(o[1]) ?? 0) + 1);
  const posted = new Map<string, number>();
  for (const p of fake.posted) {
    const text = String(p.body.content ?? "");
    if (text.startsWith(OUT_PREFIX)) posted.set(text, (posted.get(text) ?? 0) + 1);
  }
  const chatDb = new Database(chatDbPath, { readonly: true });
  for (const row of chatDb
    .query<{ text: string | null; body: Uint8Array | null }, []>(
      "SELECT text, attributedBody AS body FROM message WHERE is_from_me = 1",
    )
    .all()) {
    const text = decodeAttributedBody(row.body) ?? row.text ?? "";
    if (text.startsWith(OUT_PREFIX)) posted.set(text, (posted.get(text) ?? 0) + 1);
  }
  chatDb.close();
  const standinCalls = new Map<string, number>();
  /** Text → when the stand-in began (after its process started and loaded), epoch ms. */
  const standinAt = new Map<string, number>();
  try {
    for (const line of readFileSync(standinLog, "utf8").split("\n")) {
      if (!line.trim()) continue;
      const call = JSON.parse(line) as { argv?: string[]; at?: string };
      const text = call.argv?.[1] ?? "";
      standinCalls.set(text, (standinCalls.get(text) ?? 0) + 1);
      if (call.at && !standinAt.has(text)) standinAt.set(text, Date.parse(call.at));
    }
  } catch {}
  // Where an iMessage send's time goes: request → stand-in running (gw's checks, the spawn, Bun's
  // start-up and imports) and stand-in running → answer (the row written, exit, gw's chat.db check).
  const toStandin: number[] = [];
  const fromStandin: number[] = [];
  for (const [, channel, text, status, ms, , startAt] of load.sends) {
    const at = standinAt.get(text);
    if (status !== 200 || channel.startsWith("community_chat:") || at === undefined) continue;
    const start = startAt - agents.child.offsetMs;
    toStandin.push(at - start);
    fromStandin.push(start + ms - at);
  }
  const imessageSplit = { toStandinMs: dist(toStandin), standinToAnswerMs: dist(fromStandin) };
  const sendAudit = {
    attempted: load.sends.length,
    accepted: 0,
    refused: 0,
    postedOnce: 0,
    notPosted: 0,
    postedTwice: 0,
    storedOnce: 0,
    storedWrong: 0,
    unconfirmedImessage: 0,
    postedThoughRefused: 0,
    outboundRows: audit.outbound.length,
    standinCalls: [...standinCalls.values()].reduce((a, b) => a + b, 0),
    statuses: {} as Record<string, number>,
  };
  for (const [, channel, text, status, , result] of load.sends) {
    sendAudit.statuses[status] = (sendAudit.statuses[status] ?? 0) + 1;
    const n = posted.get(text) ?? 0;
    if (status !== 200) {
      sendAudit.refused++;
      if (n > 0) sendAudit.postedThoughRefused++;
      continue;
    }
    sendAudit.accepted++;
    if (n === 1) sendAudit.postedOnce++;
    else if (n === 0) sendAudit.notPosted++;
    else sendAudit.postedTwice++;
    const row = outboundById.get(result);
    if (row && row[1] === text && row[2] === channel && outboundTexts.get(text) === 1) sendAudit.storedOnce++;
    else sendAudit.storedWrong++;
    if (row && !channel.startsWith("community_chat:") && row[3] === null) sendAudit.unconfirmedImessage++;
  }

  const health = (await gw.child.request({ cmd: "health" })).connectors;
  await agents.child.stop();
  await writer.child.stop();
  await gw.child.stop();
  await sink.stop();
  fakes.delete(fake);
  await fake.stop();

  // Figures.
  const wallS = (tLoadDone - t0) / 1000;
  const rps = load.overall.n / DURATION_S;
  const failed = (f: RouteFigures) => f.n - f.ok;
  const after = samples.filter((s) => s.t >= WARMUP_S);
  const rssBase = median(after.slice(0, 5).map((s) => s.rssMiB));
  const rssEnd = median(samples.slice(-5).map((s) => s.rssMiB));
  const rssPeak = Math.max(...after.map((s) => s.rssMiB));
  const rssGrowthPct = r1((rssEnd / rssBase - 1) * 100);
  const rssSlope = slope(after.map((s) => [s.t / 60, s.rssMiB] as [number, number]));
  const walMax = Math.max(...samples.map((s) => s.walMiB), walEndMiB);
  const cpuOf = (
    a: { self: number; children: number } | null,
    b: { self: number; children: number } | null,
  ) => (a && b ? { self: b.self - a.self, children: b.children - a.children } : null);
  const windowMs = cpu1.at - cpu0.at;
  const share = (ms: number) => r1((ms / windowMs) * 100);
  const gwCpu = cpuOf(cpu0.gw, cpu1.gw);
  const ours =
    (gwCpu ? gwCpu.self + gwCpu.children : 0) +
    (cpuOf(cpu0.agents, cpu1.agents)?.self ?? 0) +
    (cpuOf(cpu0.writer, cpu1.writer)?.self ?? 0) +
    (cpuOf(cpu0.sink, cpu1.sink)?.self ?? 0) +
    (cpu1.self.user + cpu1.self.system) / 1000;
  const machineMs = cpu0.machine !== null && cpu1.machine !== null ? cpu1.machine - cpu0.machine : null;
  const cpu = {
    windowS: r2(windowMs / 1000),
    gwPctOfCore: gwCpu ? share(gwCpu.self) : null,
    standinsPctOfCore: gwCpu ? share(gwCpu.children) : null,
    agentsPctOfCore: share(cpuOf(cpu0.agents, cpu1.agents)?.self ?? 0),
    writerPctOfCore: share(cpuOf(cpu0.writer, cpu1.writer)?.self ?? 0),
    sinkPctOfCore: share(cpuOf(cpu0.sink, cpu1.sink)?.self ?? 0),
    benchPctOfCore: share((cpu1.self.user + cpu1.self.system) / 1000),
    machineBusyPctOfAllCores:
      machineMs === null ? null : r1((machineMs / windowMs / navigator.hardwareConcurrency) * 100),
    otherPctOfAllCores:
      machineMs === null ? null : r1(((machineMs - ours) / windowMs / navigator.hardwareConcurrency) * 100),
  };

  // Seconds in which other processes (not this benchmark's) used under 10% of the CPUs: bySecond[k]
  // holds the requests completed in [k, k + 1) s, samples[k + 1] the CPU over the same second.
  const perSecondP99 = load.bySecond.map((xs) => dist(xs ?? []).p99);
  const otherBySecond = load.bySecond.map((_, k) => samples[k + 1]?.otherPct ?? null);
  const quietSeconds = otherBySecond.flatMap((o, k) => (o !== null && o < 10 ? [k] : []));
  const quietLatency = dist(quietSeconds.flatMap((k) => load.bySecond[k] ?? []));
  const quietSet = new Set(quietSeconds);
  /** iMessage sends that began in a quiet second (the stand-in's start-up is CPU-bound). */
  const quietImessageSends = dist(
    load.sends
      .filter(
        ([, channel, , status, , , startAt]) =>
          status === 200 &&
          !channel.startsWith("community_chat:") &&
          quietSet.has(Math.floor((startAt - spec.t0) / 1000)),
      )
      .map((x) => x[4]),
  );
  const routeRow = (
    name: string,
    f: RouteFigures,
    target: string | null,
    limitMs: number | null,
  ): SummaryRow => ({
    figure: `${name}: p50 / p99 (${fmt(f.n)} requests)`,
    value: `${f.latency.p50} / ${f.latency.p99} ms`,
    baseline: "",
    ratio: null,
    target: target ?? "",
    pass: limitMs === null || f.n === 0 ? null : f.latency.p99 <= limitMs,
  });
  const errors = failed(load.overall);
  const summary: SummaryRow[] = [
    {
      figure: `requests/s in all (${AGENTS} agents' unread → context → mark_read, ${SEND_RPS} sends/s; planned ${fmt(Math.round(API_RPS + SEND_RPS))})`,
      value: `${fmt(Math.round(rps))} req/s`,
      baseline: "",
      ratio: null,
      target: `≥ ${TARGET.rps} req/s`,
      pass: rps >= TARGET.rps,
    },
    {
      figure: "all requests: p50 / p99",
      value: `${load.overall.latency.p50} / ${load.overall.latency.p99} ms`,
      baseline: "",
      ratio: null,
      target: `p99 ≤ ${TARGET.p99Ms} ms`,
      pass: load.overall.latency.p99 <= TARGET.p99Ms,
    },
    routeRow("agents' routes together (unread, context, mark_read)", load.reads, null, null),
    ...Object.entries(load.routes).map(([name, f]) =>
      name.startsWith("POST /messages/send")
        ? routeRow(name, f, `p99 ≤ ${TARGET.sendP99Ms} ms (L2)`, TARGET.sendP99Ms)
        : routeRow(name, f, null, null),
    ),
    {
      figure: `all requests, only the ${quietSeconds.length} of ${load.bySecond.length} seconds in which other processes used < 10% of the CPUs: p50 / p99`,
      value: `${quietLatency.p50} / ${quietLatency.p99} ms`,
      baseline: "",
      ratio: null,
      target: "",
      pass: null,
    },
    {
      figure: "CPU during the load (this VM is shared: other processes are other sessions' work)",
      value: `gw ${cpu.gwPctOfCore}% of a core, its stand-in processes ${cpu.standinsPctOfCore}%, load generator ${cpu.agentsPctOfCore}%; other processes ${cpu.otherPctOfAllCores}% of all CPUs`,
      baseline: "",
      ratio: null,
      target: "",
      pass: null,
    },
    {
      figure: "errors: non-2xx (429 included) + socket errors",
      value: `${errors} (${
        Object.entries(load.overall.statuses)
          .map(([s, n]) => `${s}: ${n}`)
          .join(", ") || "no non-2xx"
      }; ${load.overall.socketErrors} socket)`,
      baseline: "",
      ratio: null,
      target: "0",
      pass: errors === 0,
    },
    {
      figure: `gw RSS growth after the ${WARMUP_S} s warm-up (median of 5 samples, start → end)`,
      value: `${rssGrowthPct >= 0 ? "+" : ""}${rssGrowthPct}% (${rssBase} → ${rssEnd} MiB, peak ${rssPeak})`,
      baseline: "",
      ratio: null,
      target: `≤ ${TARGET.rssGrowthPct}%`,
      pass: rssGrowthPct <= TARGET.rssGrowthPct,
    },
    {
      figure: "gw.db-wal at the end of the load (largest sampled)",
      value: `${walEndMiB} MiB (${r2(walMax)})`,
      baseline: "",
      ratio: null,
      target: `≤ ${TARGET.walMiB} MiB`,
      pass: walEndMiB <= TARGET.walMiB && walMax <= TARGET.walMiB,
    },
    {
      figure: `webhook queue drained (allowed inbound delivered; pending within ${DRAIN_S} s of the end)`,
      value: `${fmt(webhookAudit.deliveredOnce)}/${fmt(allowedInbound.length)} delivered, sink ${fmt(arrivals.byId.size)}, ${drained.last.pending ?? "?"} pending, ${drained.ms} ms after the end`,
      baseline: "",
      ratio: null,
      target: `all, 0 pending, ≤ ${DRAIN_S} s`,
      pass:
        drained.ok &&
        webhookAudit.deliveredOnce === allowedInbound.length &&
        webhookAudit.receivedBySink === allowedInbound.length &&
        arrivals.byId.size === allowedInbound.length &&
        arrivals.dupes === 0 &&
        arrivals.bad === 0 &&
        webhookAudit.forUnknownSenders === 0,
    },
    {
      figure: `inbound stored exactly once (${fmt(imPlan.length)} chat.db rows + ${fmt(dcPlan.length)} MESSAGE_CREATEs + ${prime.length} primes)`,
      value: `${fmt(inboundAudit.storedOnce)}/${fmt(inbound.length)} (${inboundAudit.missing} missing, ${inboundAudit.duplicated} duplicated, ${inboundAudit.wrongStatus} wrong status)`,
      baseline: "",
      ratio: null,
      target: "all, once",
      pass:
        inboundAudit.storedOnce === inbound.length &&
        inboundAudit.wrongStatus === 0 &&
        inboundAudit.unexpected === 0,
    },
    {
      figure: "accepted sends posted exactly once on their platform and stored once",
      value: `${fmt(sendAudit.postedOnce)}/${fmt(sendAudit.accepted)} posted once, ${fmt(sendAudit.storedOnce)} stored once (${sendAudit.notPosted} not posted, ${sendAudit.postedTwice} twice; ${sendAudit.refused} refused)`,
      baseline: "",
      ratio: null,
      target: "all, once",
      pass:
        (sendAudit.accepted > 0 || SEND_RPS === 0) &&
        sendAudit.postedOnce === sendAudit.accepted &&
        sendAudit.storedOnce === sendAudit.accepted &&
        sendAudit.postedThoughRefused === 0 &&
        sendAudit.outboundRows === sendAudit.accepted,
    },
  ];

  const routeLines = Object.entries(load.routes).map(
    ([name, f]) =>
      `  ${name.padEnd(32)} ${String(f.n).padStart(7)}  ${String(f.latency.p50).padStart(7)}  ${String(f.latency.p90).padStart(7)}  ${String(f.latency.p99).padStart(7)}  ${String(f.latency.max).padStart(8)}  ${failed(f)}`,
  );
  const lines = [
    `load: ${DURATION_S} s, ${fmt(load.overall.n)} requests (${fmt(Math.round(rps))}/s), ${AGENTS} agents, ${CHANNELS} channels, ${SEND_RPS} sends/s, ${INBOUND_RPS} inbound/s`,
    `  ${"route".padEnd(32)} ${"n".padStart(7)}  ${"p50".padStart(7)}  ${"p90".padStart(7)}  ${"p99".padStart(7)}  ${"max".padStart(8)}  failed`,
    ...routeLines,
    `  ${"all".padEnd(32)} ${String(load.overall.n).padStart(7)}  ${String(load.overall.latency.p50).padStart(7)}  ${String(load.overall.latency.p90).padStart(7)}  ${String(load.overall.latency.p99).padStart(7)}  ${String(load.overall.latency.max).padStart(8)}  ${errors}`,
    `agent loops: ${fmt(load.loops.n)}, empty pages ${fmt(load.loops.emptyPages)}, late start p99 ${load.loops.lateMs.p99} ms (over a period: ${load.loops.lateOverPeriod}), messages marked read ${fmt(load.loops.messagesRead)}`,
    `iMessage sends, request → stand-in running p50 / p99: ${imessageSplit.toStandinMs.p50} / ${imessageSplit.toStandinMs.p99} ms; stand-in running → answer: ${imessageSplit.standinToAnswerMs.p50} / ${imessageSplit.standinToAnswerMs.p99} ms (epoch ms of its log, ±1 ms)`,
    `iMessage sends begun in the quiet seconds: p50 / p99 ${quietImessageSends.p50} / ${quietImessageSends.p99} ms (${quietImessageSends.n})`,
    `p99 per second (ms): ${perSecondP99.join(" ")}`,
    `other processes per second (% of all CPUs): ${otherBySecond.join(" ")}`,
    `gw CPU per second (% of a core): ${samples
      .slice(1)
      .map((x) => x.gwPct)
      .join(" ")}`,
    `RSS (MiB, per second): ${samples.map((s) => s.rssMiB).join(" ")}`,
    `WAL (MiB, per second): ${samples.map((s) => s.walMiB).join(" ")}`,
    `CPU (% of one core): gw ${cpu.gwPctOfCore}, stand-ins ${cpu.standinsPctOfCore}, agents ${cpu.agentsPctOfCore}, writer ${cpu.writerPctOfCore}, sink ${cpu.sinkPctOfCore}, this script ${cpu.benchPctOfCore}; machine ${cpu.machineBusyPctOfAllCores}% of all cores busy, other processes ${cpu.otherPctOfAllCores}%`,
    ...(load.errorSamples.length > 0 ? ["error samples:", ...load.errorSamples.map((e) => `  ${e}`)] : []),
  ];

  return {
    summary,
    lines,
    otherPct: cpu.otherPctOfAllCores,
    results: {
      settings: {
        durationS: DURATION_S,
        warmupS: WARMUP_S,
        agents: AGENTS,
        agentPeriodMs: r2(PERIOD_MS),
        plannedApiRps: API_RPS,
        pageLimit: LIMIT,
        context: CONTEXT,
        channels: { imessage: IM_CHANNELS, discord: DC_CHANNELS },
        sendRps: SEND_RPS,
        rateLimit: { perChannelRps: RATE_PER_CHANNEL, burst: RATE_BURST },
        inboundRps: INBOUND_RPS,
        drainS: DRAIN_S,
        seed: SEED,
      },
      history: seeded,
      quietWaitS: waitedS,
      machineLoad,
      wallS: r2(wallS),
      requestsPerS: r1(rps),
      routes: load.routes,
      overall: load.overall,
      reads: load.reads,
      perSecond: load.perSecond,
      perSecondP99,
      otherPctBySecond: otherBySecond,
      quiet: { seconds: quietSeconds.length, latency: quietLatency, imessageSends: quietImessageSends },
      loops: load.loops,
      inboundLate: { discord: dist(discordLate), imessage: writerMsg.lateMs },
      samples,
      rss: {
        baseMiB: rssBase,
        endMiB: rssEnd,
        peakMiB: rssPeak,
        growthPct: rssGrowthPct,
        slopeMiBPerMin: r2(rssSlope),
      },
      wal: { endMiB: walEndMiB, maxMiB: r2(walMax) },
      drain: drained,
      inbound: inboundAudit,
      webhooks: webhookAudit,
      sends: sendAudit,
      imessageSendSplit: imessageSplit,
      cpu,
      store: audit.counts,
      connectorsAtEnd: health,
      errorSamples: load.errorSamples,
    },
  };
}

/**
 * Runs the whole benchmark (fresh directory, processes and fake) up to ATTEMPTS times while other
 * processes used more than MAX_OTHER_PCT of the CPUs during the load, and reports the quietest attempt.
 */
async function main() {
  const tried: Attempt[] = [];
  for (let n = 1; n <= ATTEMPTS; n++) {
    const a = await attempt();
    tried.push(a);
    if (a.otherPct === null || a.otherPct <= MAX_OTHER_PCT) break;
    if (n < ATTEMPTS)
      progress(
        `other processes used ${a.otherPct}% of the CPUs during the load (over ${MAX_OTHER_PCT}%): again`,
      );
  }
  const best = tried.reduce((x, y) => ((y.otherPct ?? 0) < (x.otherPct ?? 0) ? y : x));
  const attempts = tried.map((a) => ({
    otherPct: a.otherPct,
    verdicts: a.summary
      .filter((r) => r.pass !== null)
      .map((r) => `${r.pass ? "met" : "missed"}: ${r.figure}`),
  }));
  report({
    bench: "load",
    command: "bun run bench load",
    startedAt,
    summary: best.summary,
    lines: [
      ...best.lines,
      ...(tried.length > 1
        ? [
            `attempts: ${tried.length}, other processes' share ${tried.map((a) => `${a.otherPct}%`).join(", ")}; reported: the quietest`,
          ]
        : []),
    ],
    results: { ...best.results, attempts },
  });
}

try {
  await main();
} finally {
  session.cleanup();
}
process.exit(0);
