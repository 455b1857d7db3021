/**
 * bench/search/search.ts's world: a vocabulary of VOCABULARY made-up words drawn Zipf-like (rank r with weight
 * 1/(r+1)^s, so a few words are in most messages and most words in few), CHANNELS channels with
 * Zipf-like traffic (s = 0.8), allowlisted people and strangers per platform, and message i of the run.
 * Deterministic for BENCH_SEED: everything draws from the settings' one stream, in message order.
 */
import type { Direction } from "../../src/core/envelope.ts";
import { normalized } from "../lib/seed.ts";
import { shuffled, zipf } from "../lib/stats.ts";
import { type Channel, type Person, storeCast, storeChannels } from "../lib/world.ts";
import {
  CHANNELS,
  IMESSAGE_SHARE,
  OUTBOUND_SHARE,
  ROWS,
  randInt,
  rng,
  SPAN_MS,
  START_MS,
  STRANGER_SHARE,
  VOCABULARY,
  ZIPF_S,
} from "./settings.ts";

const SYLLABLES = "ka lo mi ne ru sa ti vo ze bu da fe gi ho ja pu ro se ta wi ya no me li".split(" ");

/** Word of frequency rank r: r+1 in bijective base 24 over two-letter syllables (distinct by construction). */
export function wordOf(rank: number): string {
  let n = rank + 1;
  let w = "";
  while (n > 0) {
    n -= 1;
    w = (SYLLABLES[n % SYLLABLES.length] as string) + w;
    n = Math.floor(n / SYLLABLES.length);
  }
  return w;
}

export function buildWorld() {
  const channels = storeChannels(CHANNELS, Math.round(CHANNELS * IMESSAGE_SHARE));
  const order = shuffled(CHANNELS, rng);
  const channelRank = zipf(CHANNELS, 0.8);
  const wordRank = zipf(VOCABULARY, ZIPF_S);
  const { known, strangers, allowlist } = storeCast({ known: 150, strangers: 400, persons: 120 });
  return {
    channels,
    channelIndex: () => order[channelRank(rng)] as number,
    wordRank: () => wordRank(rng),
    known,
    strangers,
    allowlist,
  };
}

export type World = ReturnType<typeof buildWorld>;

export interface Generated {
  channel: Channel;
  sender: Person;
  direction: Direction;
  messageTs: number;
  platformId: string;
  /** Frequency ranks of the text's words, in order. */
  ranks: number[];
  text: string;
}

const OWNER: Person = { id: "owner", displayName: "Me" };

/**
 * Who writes an inbound message: in a one-to-one channel always its one other person (a stranger in
 * STRANGER_SHARE of them), in a group anyone (a stranger in STRANGER_SHARE of its messages).
 */
function inboundSender(world: World, channel: Channel, index: number, r: number, pick: number): Person {
  if (channel.type === "dm") {
    const strangers = index % Math.round(1 / STRANGER_SHARE) === 0;
    return (strangers ? world.strangers : world.known)[channel.source][index % 150] as Person;
  }
  const people = r < OUTBOUND_SHARE + STRANGER_SHARE ? world.strangers : world.known;
  return people[channel.source][pick] as Person;
}
const GAP_MS = SPAN_MS / ROWS;

/** Message i (i may run past ROWS: the ingest rounds continue the history). */
export function generate(world: World, i: number): Generated {
  const index = world.channelIndex();
  const channel = world.channels[index] as Channel;
  const r = rng();
  const direction: Direction = r < OUTBOUND_SHARE ? "outbound" : "inbound";
  const pick = randInt(150);
  const sender = direction === "outbound" ? OWNER : inboundSender(world, channel, index, r, pick);
  const ranks = Array.from({ length: 2 + randInt(24) }, () => world.wordRank());
  return {
    channel,
    sender,
    direction,
    messageTs: Math.round(START_MS + i * GAP_MS),
    platformId: `${channel.source === "device_messenger" ? "guid" : "sf"}-${i}`,
    ranks,
    text: ranks.map(wordOf).join(" "),
  };
}

/** Message i as its connector hands it to ingest (`raw` names its index). */
export const normalizedOf = (g: Generated, i: number) => normalized({ ...g, raw: { i } }, null);
