/**
 * The pieces of the benchmarks' seeded worlds that api/api.ts, store/store.ts, load/load.ts and webhooks/webhooks.ts
 * share: the word list texts are drawn from, the channel list of the store benchmarks (iMessage DMs and
 * groups first, then Discord), their allowlisted people and strangers, the allowlist file written from
 * entries (storeCast), and a logger that drops everything. Deterministic: nothing here draws random numbers.
 */
import { type AllowlistEntry, buildAllowlist } from "../../src/allowlist/parse.ts";
import type { ChannelType, Source } from "../../src/core/envelope.ts";
import type { Logger } from "../../src/core/ports.ts";

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

/** The allowlist file for these entries (display_name only where there is one), entries a blank line apart. */
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
