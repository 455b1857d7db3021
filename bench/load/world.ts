/**
 * bench/load/load.ts's world, rebuilt for every attempt on its fake Discord: one allowlisted friend and one
 * stranger per channel and platform; half the channels iMessage (DMs with a friend or a stranger, and
 * groups of both), half Discord (guild channels); the chat.db chats and the allowlist. Plus where an
 * inbound message may come from and the plan of the timed inbound messages, every other one allowed.
 */
import type { AllowlistEntry } from "../../src/allowlist/parse.ts";
import type { Source } from "../../src/core/envelope.ts";
import type { ChatSpec } from "../../src/demo/chatdb-writer.ts";
import type { FakeDiscord, FakeUser } from "../../src/demo/fake-discord/server.ts";
import { allowlistToml } from "../lib/world.ts";
import { CHANNELS, DC_CHANNELS, IM_CHANNELS, IN_PREFIX, PEOPLE } from "./settings.ts";

export interface Person {
  id: string;
  name: string;
  allowed: boolean;
  user?: FakeUser;
}

export interface Channel {
  /** gw's channel id. */
  id: string;
  source: Source;
  type: "dm" | "group";
  platformRef: string;
  /** Who writes in it: the allowlisted member and the stranger (a DM has one of them). */
  friend: Person | null;
  stranger: Person | null;
}

const phone = (base: number, i: number) => `+1555${String(base + i).padStart(7, "0")}`;

/** Friends and strangers of both platforms (the Discord ones are users of the fake). */
function people(fake: FakeDiscord) {
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
  return { imFriends, imStrangers, dcFriends, dcStrangers };
}

type People = ReturnType<typeof people>;

/** iMessage: every fifth chat a DM with a friend, the next a DM with a stranger, the others groups of both. */
function imessageChannels(p: People): Channel[] {
  return Array.from({ length: IM_CHANNELS }, (_, i): Channel => {
    const friend = p.imFriends[i] as Person;
    const stranger = p.imStrangers[i] as Person;
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
}

/** The chat.db chats of the iMessage channels, as Messages records them. */
const chatsOf = (imChannels: readonly Channel[]): ChatSpec[] =>
  imChannels.map((c) =>
    c.type === "dm"
      ? { guid: c.platformRef, style: 45, chatIdentifier: c.id, participants: [c.id] }
      : {
          guid: c.platformRef,
          style: 43,
          chatIdentifier: c.platformRef.split(";").at(-1) as string,
          participants: [(c.friend as Person).id, (c.stranger as Person).id],
        },
  );

/** People, chats, channels and the allowlist of one attempt, on its fake Discord. */
export function buildWorld(fake: FakeDiscord) {
  const p = people(fake);
  const guild = fake.guild({ name: "bench" });
  const imChannels = imessageChannels(p);
  const dcChannels: Channel[] = Array.from({ length: DC_CHANNELS }, (_, i): Channel => {
    const { id } = fake.channel(guild.id, { name: `room-${i}` });
    return {
      id: `community_chat:channel:${id}`,
      source: "community_chat",
      type: "group",
      platformRef: id,
      friend: p.dcFriends[i] as Person,
      stranger: p.dcStrangers[i] as Person,
    };
  });
  const channels = [...imChannels, ...dcChannels];
  if (new Set(channels.map((c) => c.id)).size !== CHANNELS) throw new Error("two channels share an id");
  const entry = (source: Source) => (q: Person, i: number) => ({
    source,
    id: q.id,
    person_id: `person-${i}`,
    display_name: q.name,
  });
  const allowEntries: AllowlistEntry[] = [
    ...p.imFriends.map(entry("device_messenger")),
    ...p.dcFriends.map(entry("community_chat")),
  ];
  const allowlistText = allowlistToml(allowEntries);
  return {
    imChannels,
    dcChannels,
    channels,
    chats: chatsOf(imChannels),
    allowEntries,
    allowlistToml: allowlistText,
  };
}

export type World = ReturnType<typeof buildWorld>;

/** A sender for a message in this channel: the friend when `allowed` and there is one, else the stranger. */
export function senderIn(c: Channel, allowed: boolean): Person | null {
  return allowed ? c.friend : c.stranger;
}

/** Channels where a message of this kind can come from (a DM only has its own person). */
export const compatible = (list: readonly Channel[], allowed: boolean) =>
  list.filter((c) => senderIn(c, allowed) !== null);

export interface Inbound {
  text: string;
  channel: Channel;
  from: Person;
}

/** Message j of a platform: every other one from an allowlisted sender, in a channel where that sender writes. */
export function inboundPlan(
  list: readonly Channel[],
  n: number,
  tag: string,
  random: () => number,
): Inbound[] {
  const friendly = compatible(list, true);
  const strange = compatible(list, false);
  return Array.from({ length: n }, (_, j) => {
    const allowed = j % 2 === 0;
    const pool = allowed ? friendly : strange;
    const channel = pool[Math.floor(random() * pool.length)] as Channel;
    return { text: `${IN_PREFIX}${tag}-${j}`, channel, from: senderIn(channel, allowed) as Person };
  });
}
