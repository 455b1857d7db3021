/**
 * The pieces of the benchmarks' seeded worlds: the word list texts are drawn from, the channel list of
 * the store benchmarks (iMessage DMs and groups first, then Discord), their allowlisted people and
 * strangers, the allowlist file written from entries (storeCast), and a logger that drops everything;
 * and the store world of api.ts, store.ts and channels.ts (storeWorld: Zipf-like traffic over those
 * channels; storeMessage: message i of a run, drawn from the run's seeded stream in message order).
 */
import { type AllowlistEntry, buildAllowlist } from "../../src/allowlist/parse.ts";
import type { ChannelType, Direction, Source } from "../../src/core/envelope.ts";
import type { Logger } from "../../src/core/ports.ts";
import { shuffled, zipf } from "./stats.ts";

export const WORDS =
  "ok yes no maybe later tonight tomorrow dinner meeting call back see you soon thanks great sounds good where are we the a on at is it running late almost there can you send me file link photo address when what why how love this lol nice".split(
    " ",
  );

export interface Channel {
  id: string;
  source: Source;
  type: ChannelType;
  platformRef: string;
}

export interface Person {
  id: string;
  displayName: string;
}

/**
 * `total` channels: the first `imessage` on device_messenger (every fourth a group, the others DMs with
 * a +1555 number), the rest on community_chat (every fifth a DM).
 */
export function storeChannels(total: number, imessage: number): Channel[] {
  return Array.from({ length: total }, (_, i): Channel => {
    if (i < imessage) {
      const group = i % 4 === 0;
      const id = group ? `chat${100_000_000 + i * 7919}` : `+1555${String(1_000_000 + i * 3571).slice(-7)}`;
      return {
        id,
        source: "device_messenger",
        type: group ? "group" : "dm",
        platformRef: `iMessage;${group ? "+" : "-"};${id}`,
      };
    }
    const id = String(1_100_000_000_000_000_000n + BigInt(i) * 4_194_304_017n);
    return { id, source: "community_chat", type: i % 5 === 0 ? "dm" : "group", platformRef: id };
  });
}

/** `n` people of a platform: allowlisted ones (`known`) or strangers, with distinct ids. */
export function storePeople(source: Source, n: number, known: boolean): Person[] {
  return Array.from({ length: n }, (_, i) =>
    source === "device_messenger"
      ? {
          id: `+1666${String((known ? 2_000_000 : 5_000_000) + i * 7).slice(-7)}`,
          displayName: `Person ${i}`,
        }
      : {
          id: String(900_000_000_000_000_000n + BigInt((known ? 0 : 1_000_000) + i) * 65_537n),
          displayName: `${known ? "member" : "visitor"}${i}`,
        },
  );
}

/**
 * The allowlist of the known people of both platforms: person ids repeat every `persons` entries (so
 * the gateway logs no single-use warnings), every third entry has no display name.
 */
export function storeAllowEntries(known: Record<Source, Person[]>, persons: number): AllowlistEntry[] {
  return (["device_messenger", "community_chat"] as const).flatMap((source) =>
    known[source].map((p, i) => ({
      source,
      id: p.id,
      person_id: `person-${i % persons}`,
      display_name: i % 3 === 0 ? null : `Friend ${i}`,
    })),
  );
}

/**
 * The people of a store world: `known` allowlisted people and `strangers` per source, and the allowlist
 * that joins the known ones into `persons` persons (entries kept for a TOML file).
 */
export function storeCast(o: { known: number; strangers: number; persons: number }) {
  const known = {
    device_messenger: storePeople("device_messenger", o.known, true),
    community_chat: storePeople("community_chat", o.known, true),
  };
  const strangers = {
    device_messenger: storePeople("device_messenger", o.strangers, false),
    community_chat: storePeople("community_chat", o.strangers, false),
  };
  const entries = storeAllowEntries(known, o.persons);
  return { known, strangers, entries, allowlist: buildAllowlist(entries) };
}

/** The allowlist file for these entries (display_name only where there is one), entries a blank line apart. */
export function allowlistToml(entries: readonly AllowlistEntry[]): string {
  return entries
    .map(
      (e) =>
        `[[entry]]\nsource = "${e.source}"\nid = "${e.id}"\nperson_id = "${e.person_id}"\n` +
        (e.display_name ? `display_name = "${e.display_name}"\n` : ""),
    )
    .join("\n");
}

/** A Logger that drops everything (seeding through createIngest, gw built in-process). */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

/**
 * The channels messages of a store world go to: how many, how many of them iMessage (the first ones),
 * the Zipf exponent of their traffic (over a seeded shuffle of the channels, unless `busiestFirst`),
 * its people (storeCast), and which channels hear only from strangers (all their messages quarantined).
 */
export interface WorldShape {
  channels: number;
  imessageChannels: number;
  zipf: number;
  busiestFirst?: boolean;
  cast: { known: number; strangers: number; persons: number };
  strangersOnly?: (channelIdx: number) => boolean;
}

/** The world of `shape`; the shuffle of the channels is drawn from `random`. */
export function storeWorld(shape: WorldShape, random: () => number) {
  const n = shape.channels;
  const order = shape.busiestFirst ? null : shuffled(n, random);
  const rank = zipf(n, shape.zipf);
  return {
    channels: storeChannels(n, shape.imessageChannels),
    /** A channel drawn from `r`, the stream the messages are drawn from. */
    channelIndex: (r: () => number) => (order ? (order[rank(r)] as number) : rank(r)),
    strangersOnly: shape.strangersOnly ?? (() => false),
    ...storeCast(shape.cast),
  };
}

export type StoreWorld = ReturnType<typeof storeWorld>;

export interface StoreMessage {
  channel: Channel;
  channelIdx: number;
  sender: Person;
  direction: Direction;
  /** The platform's timestamp; it lags the arrival (`createdAt`) by up to two mean gaps. */
  messageTs: number;
  createdAt: number;
  platformId: string;
  text: string;
  /** Whether it replies to the previous message of its channel. */
  replies: boolean;
  raw: Record<string, unknown>;
}

const OWNER: Person = { id: "owner", displayName: "Me" };

/**
 * Message i of a run whose arrivals start at `startMs`, `gapMs` apart: 5 % the owner's, the rest from
 * an allowlisted person (80 %) or a stranger; 2–25 words; 5 % replies. Draws from `random`, so call it
 * in message order.
 */
export function storeMessage(
  world: StoreWorld,
  i: number,
  t: { startMs: number; gapMs: number },
  random: () => number,
): StoreMessage {
  const int = (k: number) => Math.floor(random() * k);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const channelIdx = world.channelIndex(random);
  const channel = world.channels[channelIdx] as Channel;
  const createdAt = Math.round(t.startMs + (i + 0.5) * t.gapMs);
  const messageTs = createdAt - int(Math.max(2, Math.round(2 * t.gapMs)));
  const r = random();
  const quarantined = world.strangersOnly(channelIdx);
  const direction: Direction = r < 0.05 && !quarantined ? "outbound" : "inbound";
  const sender =
    direction === "outbound"
      ? OWNER
      : r < 0.85 && !quarantined
        ? pick(world.known[channel.source])
        : pick(world.strangers[channel.source]);
  const hex = (k: number) => Array.from({ length: k }, () => "0123456789ABCDEF"[int(16)]).join("");
  const platformId =
    channel.source === "device_messenger"
      ? `${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`
      : ((BigInt(createdAt - 1_420_070_400_000) << 22n) | BigInt(i & 0x3fffff)).toString();
  const raw =
    channel.source === "device_messenger"
      ? { ROWID: i + 1, service: "iMessage", is_from_me: direction === "outbound" ? 1 : 0 }
      : { guild_id: "1100000000000000000", channel_id: channel.id, type: 0 };
  const text = Array.from({ length: 2 + int(24) }, () => pick(WORDS)).join(" ");
  return {
    channel,
    channelIdx,
    sender,
    direction,
    messageTs,
    createdAt,
    platformId,
    text,
    replies: random() < 0.05,
    raw,
  };
}
