/**
 * The data bench/channels/channels.ts lists, all written through the store's production paths so that the channel
 * list is kept as gw keeps it (the message store's writes, migration 5's read-marks trigger): names
 * first (store.channelList.setNames, as connectors do on connect, plus named channels that never get a
 * message), then the messages (store/seed.ts: createIngest for the first BENCH_INGEST_ROWS,
 * store.messages.insert for the rest), then read marks (store.reads.markRead, MARK_BATCH ids a call),
 * then unsends (store.messages.markDeleted: scattered messages, channels' newest messages, whole small
 * channels) and renames. Deterministic for a seed.
 */
import type { ChannelName } from "../../src/store/channel-list.ts";
import type { Store } from "../../src/store/store.ts";
import { elapsed } from "../lib/settings.ts";
import { type Channel, type Person, storeChannels, storePeople } from "../lib/world.ts";
import { seedMessages } from "../store/seed.ts";
import { randInt, rng } from "../store/settings.ts";
import { AGENTS, CHANNELS, FULL_READ_MAX, LIGHT, MARK_BATCH, progress, READER, SHAPE } from "./settings.ts";

const CHANNEL_LIST = storeChannels(SHAPE.channels, SHAPE.imessageChannels);
/** The iMessage people of store/seed.ts's world (allowlisted, then strangers): group members. */
const PEOPLE = [
  ...storePeople("device_messenger", 150, true),
  ...storePeople("device_messenger", 400, false),
];

/** The platform's name of channel `i` as its connector would set it (null for a fifth: never named). */
function nameOf(c: Channel, i: number, suffix: string): ChannelName | null {
  if (rng() < 0.2) return null;
  const base = { channelId: c.id, source: c.source, type: c.type, participants: [] as string[] };
  if (c.source === "community_chat") {
    if (c.type === "dm") return { ...base, name: `@user${i}${suffix}` };
    const thread = i % 10 === 0 ? ` › thread-${i}` : "";
    return { ...base, name: `guild-${i % 25} #chan-${i}${thread}${suffix}` };
  }
  if (c.type === "dm") return { ...base, name: "", participants: [c.id] };
  if (rng() < 0.5) return { ...base, name: `Group ${i}${suffix}` };
  // An unnamed group chat: named by its people (allowlisted ones by their display names).
  const people = Array.from({ length: 2 + randInt(3) }, () => (PEOPLE[randInt(PEOPLE.length)] as Person).id);
  return { ...base, name: "", participants: people };
}

/** Sets the names of the channels `which` picks (most of them get one); returns how many. */
function setNames(store: Store, which: (i: number) => boolean, suffix: string): number {
  const names: ChannelName[] = [];
  CHANNEL_LIST.forEach((c, i) => {
    const n = which(i) ? nameOf(c, i, suffix) : null;
    if (n) names.push(n);
  });
  store.db.transaction(() => store.channelList.setNames(names)).immediate();
  return names.length;
}

/** Named channels that never get a message (a row the list must not show). */
const PHANTOMS = Math.round(CHANNELS * 0.03);

function setPhantoms(store: Store): void {
  const names: ChannelName[] = Array.from({ length: PHANTOMS }, (_, i) => ({
    channelId: String(1_200_000_000_000_000_000n + BigInt(i)),
    source: "community_chat",
    type: "group",
    name: `guild-x #never-used-${i}`,
    participants: [],
  }));
  store.db.transaction(() => store.channelList.setNames(names)).immediate();
}

/** Allowed message ids per channel, oldest first (the order an agent reads them in). */
function allowedByChannel(store: Store): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const rows = store.db
    .query<{ channel_id: string; id: string }, []>(
      "SELECT channel_id, id FROM messages WHERE allowlist_status = 'allowed' ORDER BY channel_id, message_ts, id",
    )
    .all();
  for (const r of rows) {
    const list = out.get(r.channel_id);
    if (list) list.push(r.id);
    else out.set(r.channel_id, [r.id]);
  }
  return out;
}

/**
 * What an agent reads of a channel (the k-th, `ids` its allowed messages oldest first). agent-reader
 * reads in every channel: a third fully (if at most FULL_READ_MAX, else the older half, at most 50), a
 * third the older half (at most 10), a third one message at random. agent-light: every tenth channel,
 * its oldest FULL_READ_MAX (all of a small one). agent-none: nothing.
 */
function toRead(agent: string, k: number, ids: readonly string[]): readonly string[] {
  const half = Math.ceil(ids.length / 2);
  if (agent === LIGHT) return k % 10 === 0 ? ids.slice(0, FULL_READ_MAX) : [];
  if (agent !== READER) return [];
  if (k % 3 === 0) return ids.length <= FULL_READ_MAX ? ids : ids.slice(0, Math.min(half, 50));
  if (k % 3 === 1) return ids.slice(0, Math.min(half, 10));
  return [ids[randInt(ids.length)] as string];
}

/** Marks each agent's reads through store.reads.markRead, MARK_BATCH ids a call; returns marks per agent. */
function seedReads(store: Store, byChannel: Map<string, string[]>, at: number): Record<string, number> {
  const marks: Record<string, number> = {};
  for (const agent of AGENTS) {
    let pending: string[] = [];
    let n = 0;
    const flush = () => {
      n += store.reads.markRead(agent, pending, at);
      pending = [];
    };
    let k = 0;
    for (const ids of byChannel.values()) {
      for (const id of toRead(agent, k++, ids)) {
        pending.push(id);
        if (pending.length === MARK_BATCH) flush();
      }
    }
    flush();
    marks[agent] = n;
  }
  return marks;
}

/**
 * Unsends through store.messages.markDeleted: 0.5% of visible messages at random (read ones included),
 * the newest visible message of 1% of channels, and every visible message of 0.5% of channels with at
 * most 20 (which leave the list).
 */
function seedDeletes(store: Store): { scattered: number; newest: number; wholeChannels: number } {
  const visible = store.db
    .query<{ channel_id: string; id: string }, []>(
      "SELECT channel_id, id FROM messages WHERE allowlist_status IN ('allowed', 'outbound') ORDER BY channel_id, message_ts, id",
    )
    .all();
  const byChannel = new Map<string, string[]>();
  for (const r of visible) {
    const list = byChannel.get(r.channel_id);
    if (list) list.push(r.id);
    else byChannel.set(r.channel_id, [r.id]);
  }
  const doomed = new Set<string>();
  const scattered = Math.round(visible.length * 0.005);
  while (doomed.size < scattered) doomed.add((visible[randInt(visible.length)] as { id: string }).id);
  const channels = [...byChannel.values()];
  let newest = 0;
  let whole = 0;
  for (const ids of channels) {
    const r = rng();
    if (r < 0.01) {
      doomed.add(ids[ids.length - 1] as string);
      newest++;
    } else if (r < 0.015 && ids.length <= 20) {
      for (const id of ids) doomed.add(id);
      whole++;
    }
  }
  store.db.transaction(() => {
    for (const id of doomed) store.messages.markDeleted(id);
  })();
  return { scattered, newest, wholeChannels: whole };
}

export type SeededChannels = ReturnType<typeof seedChannels>;

/** Seeds everything on `store` (opened and closed by the caller). */
export function seedChannels(store: Store) {
  const t0 = performance.now();
  // Names first: a connector names its channels when it connects, before their messages arrive.
  const named = setNames(store, () => true, "");
  setPhantoms(store);
  const seeded = seedMessages(store, SHAPE);
  const messagesMs = elapsed(t0);
  progress(
    `  names ${named}, messages ${messagesMs} ms (ingest ${seeded.ingestMs} ms, insert ${seeded.insertMs} ms)`,
  );
  const tReads = performance.now();
  const marks = seedReads(store, allowedByChannel(store), seeded.endMs + 60_000);
  const readsMs = elapsed(tReads);
  progress(`  read marks ${JSON.stringify(marks)}: ${readsMs} ms`);
  const tDeletes = performance.now();
  const deletes = seedDeletes(store);
  const renames = setNames(store, (i) => i % 20 === 7, " (renamed)");
  const deletesMs = elapsed(tDeletes);
  progress(`  unsends ${JSON.stringify(deletes)}, renames ${renames}: ${deletesMs} ms`);
  return {
    seeded,
    named,
    marks,
    deletes,
    renames,
    phantoms: PHANTOMS,
    messagesMs,
    readsMs,
    deletesMs,
    seedMs: elapsed(t0),
  };
}
