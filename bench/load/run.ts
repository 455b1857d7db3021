/**
 * One attempt of bench/load/load.ts up to its audit: the processes (fake Discord here, the chat.db writer,
 * the seeded history, the sink, gw, the agents), the prime (one message per channel stored and
 * delivered before t0), the timed load (agents, chat.db rows, MESSAGE_CREATEs, and a sampler reading
 * gw's RSS, the WAL and every process's CPU once a second from outside: sampler.ts), and the drain.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  FAKE_BOT_TOKEN,
  type FakeDiscord,
  type FakeUser,
  startFakeDiscord,
} from "../../src/demo/fake-discord/server.ts";
import { standInProgram } from "../../test/helpers/process.ts";
import { chatDbPathIn, gwEnvFor } from "../lib/chatdb.ts";
import { MESSAGES_CHILD, startChild } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import { waitQuiet, withMachineLoad } from "../lib/machine.ts";
import { commas } from "../lib/report.ts";
import type { Session } from "../lib/session.ts";
import { PATH, SECRET, SEED, TOKEN } from "../lib/settings.ts";
import { Sink } from "../lib/sink.ts";
import { r1, r2 } from "../lib/stats.ts";
import type { LoadResult, LoadSpec } from "./agents.ts";
import { seedHistory } from "./history.ts";
import { cpuSnapshot, type Sample, sampleEverySecond, walBytes } from "./sampler.ts";
import {
  AGENTS,
  agentNames,
  CHANNELS,
  CONTEXT,
  DC_CHANNELS,
  DRAIN_S,
  DURATION_S,
  HERE,
  HISTORY,
  IM_CHANNELS,
  IN_PREFIX,
  INBOUND_RPS,
  LIMIT,
  MiB,
  OUT_PREFIX,
  PERIOD_MS,
  progress,
  QUIET_WAIT_S,
  RATE_BURST,
  RATE_PER_CHANNEL,
  SEND_RPS,
} from "./settings.ts";
import { buildWorld, type Channel, type Inbound, inboundPlan, type Person } from "./world.ts";

/** The attempt's processes and files. */
export async function startAttempt(session: Session, fakes: Set<FakeDiscord>, random: () => number) {
  const dir = session.tempDir("gw-bench-load-");
  const chatDbPath = chatDbPathIn(dir);
  const dbPath = join(dir, "data/gw.db");
  const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
  fakes.add(fake);
  const world = buildWorld(fake);
  writeFileSync(join(dir, "allowlist.toml"), world.allowlistToml);
  progress(
    `${CHANNELS} channels (${IM_CHANNELS} iMessage, ${DC_CHANNELS} Discord), ${AGENTS} agents every ${r1(PERIOD_MS)} ms, ` +
      `${SEND_RPS} sends/s, ${INBOUND_RPS} inbound/s, ${DURATION_S} s; history ${commas(HISTORY)} messages`,
  );
  const { child: writer } = await startChild("writer", [MESSAGES_CHILD], {
    PATH,
    BENCH_CHAT_DB: chatDbPath,
    BENCH_CHATS: JSON.stringify(world.chats),
  });
  const seeded = seedHistory(world, dbPath, random);
  progress(
    `seeded ${commas(seeded.messages)} messages (${commas(seeded.allowed)} allowed) and ${commas(seeded.marks)} read marks in ${seeded.ms} ms`,
  );
  const sink = await Sink.start(SECRET);
  const standinLog = join(dir, "standin.log");
  const gwEnv = {
    ...gwEnvFor(dir, chatDbPath),
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
  const gw = await startChild("gw", [join(HERE, "gw.ts")], gwEnv, 120_000);
  const gwPid = gw.ready.pid as number;
  const port = gw.ready.ready as number;
  const { child: agents } = await startChild("agents", [join(HERE, "agents.ts")], { PATH });
  progress(`gw listening on ${port} (pid ${gwPid}), both connectors ok`);
  return {
    dir,
    chatDbPath,
    dbPath,
    fake,
    world,
    writer,
    seeded,
    sink,
    standinLog,
    gw: gw.child,
    gwPid,
    port,
    agents,
  };
}

export type Attempt = Awaited<ReturnType<typeof startAttempt>>;

/** gw's own count of stored inbound (with the prefix) and of its deliveries by state. */
export const progressOf = async (a: Attempt) =>
  (await a.gw.request({ cmd: "progress" })) as unknown as {
    inbound: number;
    pending: number;
    delivered: number;
    dead: number;
  };

/** Prime: one message per channel, from its friend when it has one; stored and delivered before t0. */
export async function primeChannels(a: Attempt): Promise<Inbound[]> {
  const prime: Inbound[] = a.world.channels.map((c, i) => ({
    text: `${IN_PREFIX}prime-${i}`,
    channel: c,
    from: (c.friend ?? c.stranger) as Person,
  }));
  for (const m of prime) {
    if (m.channel.source === "device_messenger")
      await a.writer.request({
        cmd: "commit",
        chatGuid: m.channel.platformRef,
        from: m.from.id,
        text: m.text,
      });
    else a.fake.message(m.channel.platformRef, { author: m.from.user as FakeUser, content: m.text });
  }
  const primeAllowed = prime.filter((m) => m.from.allowed).length;
  for (const deadline = performance.now() + 30_000; ; ) {
    const p = await progressOf(a);
    const s = await a.sink.count();
    if (p.inbound >= prime.length && p.pending === 0 && s.n >= primeAllowed) break;
    if (performance.now() > deadline)
      throw new Error(
        `prime: ${p.inbound}/${prime.length} stored, ${s.n}/${primeAllowed} delivered after 30 s`,
      );
    await Bun.sleep(50);
  }
  progress(`primed ${prime.length} channels (stored, ${primeAllowed} webhooks delivered)`);
  return prime;
}

/** The planned MESSAGE_CREATEs, paced from t0; records how late each was posted. */
async function postDiscord(
  a: Attempt,
  dcPlan: readonly Inbound[],
  t0: number,
  late: number[],
): Promise<void> {
  const gap = 1000 / (INBOUND_RPS / 2);
  for (let j = 0; j < dcPlan.length; j++) {
    const due = t0 + j * gap;
    const wait = due - now();
    if (wait > 0) await Bun.sleep(wait);
    late.push(now() - due);
    const m = dcPlan[j] as Inbound;
    a.fake.message(m.channel.platformRef, { author: m.from.user as FakeUser, content: m.text });
  }
}

/** The agents' spec: every agent's loop and the sends, from t0 on the agents' clock. */
function loadSpec(a: Attempt, t0: number): LoadSpec {
  const { channels, imChannels, dcChannels } = a.world;
  const sendChannels = Array.from(
    { length: CHANNELS },
    (_, i) =>
      // Alternate platforms so both see the same send rate.
      (i % 2 === 0 ? imChannels[i >> 1] : dcChannels[i >> 1])?.id ?? (channels[i] as Channel).id,
  );
  return {
    port: a.port,
    token: TOKEN,
    t0: t0 + a.agents.offsetMs,
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
}

/**
 * The timed load: after waiting for a quiet machine, t0 one second ahead; agents, chat.db rows and
 * MESSAGE_CREATEs for DURATION_S, sampled every second; CPU of everything before and after.
 */
export async function timedLoad(a: Attempt, random: () => number) {
  const perPlatform = Math.floor((INBOUND_RPS * DURATION_S) / 2);
  const imPlan = inboundPlan(a.world.imChannels, perPlatform, "im", random);
  const dcPlan = inboundPlan(a.world.dcChannels, perPlatform, "dc", random);
  const waitedS = await waitQuiet(QUIET_WAIT_S, progress);
  const t0 = now() + 1000;
  const tEnd = t0 + DURATION_S * 1000;
  progress(`load: ${DURATION_S} s from t0${waitedS > 0 ? ` (waited ${waitedS} s for a quiet machine)` : ""}`);
  const spec = loadSpec(a, t0);
  const cpu0 = cpuSnapshot(a);
  const samples: Sample[] = [];
  const sampler = sampleEverySecond(a, t0, tEnd, samples);
  const discordLate: number[] = [];
  const discordInbound = postDiscord(a, dcPlan, t0, discordLate);
  const timeout = (DURATION_S + 120) * 1000;
  const [[loadMsg, writerMsg], machineLoad] = await withMachineLoad(() =>
    Promise.all([
      a.agents.request({ cmd: "run", spec }, timeout),
      a.writer.request(
        {
          cmd: "run",
          t0: t0 + a.writer.offsetMs,
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
  const cpu1 = cpuSnapshot(a, cpu0.self);
  const walEndMiB = r2(walBytes(a.dbPath) / MiB);
  progress(
    `load done: ${commas(load.overall.n)} requests, ${load.overall.n - load.overall.ok} failed; writer ${JSON.stringify(writerMsg.lateMs)}`,
  );
  const writerLateMs = writerMsg.lateMs;
  return {
    imPlan,
    dcPlan,
    waitedS,
    t0,
    tEnd,
    spec,
    cpu0,
    cpu1,
    samples,
    discordLate,
    load,
    writerLateMs,
    machineLoad,
    tLoadDone,
    walEndMiB,
  };
}

export type TimedLoad = Awaited<ReturnType<typeof timedLoad>>;

export interface Drained {
  ms: number;
  ok: boolean;
  last: Record<string, number>;
}

/** Drain: every inbound message stored, every delivery made, none pending (at most DRAIN_S after the end). */
export async function drain(a: Attempt, inbound: readonly Inbound[], allowed: number, tEnd: number) {
  let drained: Drained = { ms: 0, ok: false, last: {} };
  for (const deadline = now() + DRAIN_S * 1000; ; ) {
    const p = await progressOf(a);
    const s = await a.sink.count();
    const last = { stored: p.inbound, pending: p.pending, delivered: p.delivered, dead: p.dead, sink: s.n };
    const ok = p.inbound >= inbound.length && p.pending === 0 && s.n >= allowed;
    drained = { ms: Math.round(now() - tEnd), ok, last };
    if (ok || now() > deadline) break;
    await Bun.sleep(50);
  }
  progress(
    `drain: ${drained.ok ? "done" : "NOT done"} ${drained.ms} ms after the load ended ${JSON.stringify(drained.last)}`,
  );
  return drained;
}
