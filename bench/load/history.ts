/**
 * bench/load/load.ts's history: before the load, gw.db gets HISTORY messages of the attempt's channels over
 * the last week through createIngest (the normal write path, webhooks off, 500-message batches per
 * source), so agents' pages are full and context has neighbours; then the odd agents have read all of
 * it (raw read marks, turned into read runs by the store's own rebuildRuns), the even ones nothing.
 */
import { statSync } from "node:fs";
import { buildAllowlist } from "../../src/allowlist/parse.ts";
import type { Source } from "../../src/core/envelope.ts";
import { DISCORD_EPOCH } from "../../src/demo/fake-discord/payloads.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { openStore, type Store } from "../../src/store/store.ts";
import { seedIngest } from "../lib/seed.ts";
import { WORDS } from "../lib/world.ts";
import { ALLOWED_SHARE, agentNames, HISTORY } from "./settings.ts";
import { type Channel, compatible, senderIn, type World } from "./world.ts";

export interface History {
  messages: number;
  allowed: number;
  unknown: number;
  outbound: number;
  ms: number;
  dbBytes: number;
  marks: number;
}

/** History message i at `ts`, of a kind drawn from `random` (call in message order). */
function historyMessage(
  channels: readonly Channel[],
  i: number,
  ts: number,
  random: () => number,
): [NormalizedMessage, "outbound" | "allowed" | "unknown"] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const roll = random();
  const kind = roll < 0.05 ? "outbound" : roll < 0.05 + ALLOWED_SHARE ? "allowed" : "unknown";
  const channel = kind === "outbound" ? pick(channels) : pick(compatible(channels, kind === "allowed"));
  const person = kind === "outbound" ? null : senderIn(channel, kind === "allowed");
  const words = 2 + Math.floor(random() * 20);
  let text = pick(WORDS);
  for (let w = 1; w < words; w++) text += ` ${pick(WORDS)}`;
  const im = channel.source === "device_messenger";
  const message: NormalizedMessage = {
    source: channel.source,
    platformId: im
      ? crypto.randomUUID().toUpperCase()
      : (((BigInt(ts) - DISCORD_EPOCH) << 22n) | BigInt(i & 0xfff)).toString(),
    channel: { id: channel.id, type: channel.type, platformRef: channel.platformRef },
    sender: person ? { id: person.id, displayName: person.name } : { id: "me", displayName: "Me" },
    ...(im ? { service: "iMessage" } : {}),
    text,
    replyToPlatformId: null,
    timestampMs: ts,
    attachments: [],
    raw: im ? { seeded: i, service: "iMessage" } : { seeded: i, channel_id: channel.platformRef },
    direction: kind === "outbound" ? "outbound" : "inbound",
  };
  return [message, kind];
}

/** Every history message through createIngest on a clock that follows the messages; returns the counts. */
function ingestHistory(store: Store, world: World, end: number, random: () => number) {
  const allowlist = buildAllowlist(world.allowEntries);
  let clockNow = Date.now();
  const ingest = seedIngest(store, allowlist, { now: () => clockNow }, { webhooks: false });
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
  for (let i = 0; i < HISTORY; i++) {
    const [m, kind] = historyMessage(world.channels, i, Math.round(start + i * gap), random);
    batches[m.source].push(m);
    counts[kind]++;
    if (batches[m.source].length >= 500) flush(m.source);
  }
  flush("device_messenger");
  flush("community_chat");
  return counts;
}

/** Odd agents have read the whole history: raw read marks, then the store's own rebuildRuns. */
function markOddAgentsRead(store: Store, end: number): number {
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
  return marks;
}

export function seedHistory(world: World, dbPath: string, random: () => number): History {
  const t0 = performance.now();
  const store = openStore(dbPath);
  const end = Date.now() - 10 * 60_000;
  const counts = ingestHistory(store, world, end, random);
  const marks = markOddAgentsRead(store, end);
  store.close();
  return {
    messages: HISTORY,
    ...counts,
    marks,
    ms: Math.round(performance.now() - t0),
    dbBytes: statSync(dbPath).size,
  };
}
