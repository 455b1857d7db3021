/**
 * The people, chats and messages of bench/soak/soak.ts, shared by its Discord child (discord.ts): a
 * Zipf-like pick (a few busy channels, a long tail of quiet ones), message texts that carry their own
 * audit key, and the iMessage side (handles, DM and group chats as Messages records them, the allowlist
 * entries, and the rows of each chunk). Everything is drawn from one seeded stream per platform, in
 * message order, so a run is the same whatever its chunking.
 *
 * A text is `sk-<d|i>-<index>-<a|u> <words>`: platform, the message's index on that platform, whether
 * its sender is allowlisted; the audit reads gw.db back with `parseKey`.
 */
import type { ChatSpec } from "../../src/demo/chatdb-writer.ts";
import { zipfPicker } from "../lib/stats.ts";
import { WORDS } from "../lib/world.ts";

export type Platform = "d" | "i";

/** A message text: its audit key, then 2–25 words. */
export function textFor(p: Platform, index: number, allowed: boolean, random: () => number): string {
  const words = 2 + Math.floor(random() * 24);
  let text = `sk-${p}-${index}-${allowed ? "a" : "u"}`;
  for (let w = 0; w < words; w++) text += ` ${WORDS[Math.floor(random() * WORDS.length)]}`;
  return text;
}

/** The audit key of a stored text, or null for a text this benchmark did not write. */
export function parseKey(text: string): { p: Platform; index: number; allowed: boolean } | null {
  const m = /^sk-([di])-(\d+)-([au])(?: |$)/.exec(text);
  return m ? { p: m[1] as Platform, index: Number(m[2]), allowed: m[3] === "a" } : null;
}

export interface ImessageWorld {
  chats: ChatSpec[];
  /** Allowlisted handles (phone numbers and e-mail addresses). */
  allowed: string[];
  /** The rows of messages [from, from + n): [chat guid, sender handle, text], and how many are allowed. */
  rows(from: number, n: number): { rows: [string, string, string][]; allowed: number };
}

/**
 * `handles` people (one in ten known by an e-mail address), `allowedShare` of them allowlisted; a DM
 * with most of them and `groups` group chats of 3–8 people. Chats are picked Zipf-like (s = 0.6).
 */
export function imessageWorld(
  random: () => number,
  o: { handles: number; allowedShare: number; groups: number },
): ImessageWorld {
  const handles = Array.from({ length: o.handles }, (_, i) =>
    i % 10 === 9 ? `person${i}@example.com` : `+1555${String(3_000_000 + i * 37).padStart(7, "0")}`,
  );
  const allowedSet = new Set(handles.filter(() => random() < o.allowedShare));
  const dms = Math.max(1, o.handles - o.groups);
  const chats: ChatSpec[] = [];
  const members: string[][] = [];
  for (let i = 0; i < dms; i++) {
    const h = handles[i] as string;
    chats.push({ guid: `iMessage;-;${h}`, style: 45, chatIdentifier: h, participants: [h] });
    members.push([h]);
  }
  for (let g = 0; g < o.groups; g++) {
    const size = 3 + Math.floor(random() * 6);
    const people = new Set<string>();
    while (people.size < size) people.add(handles[Math.floor(random() * handles.length)] as string);
    const id = `chat${String(700_000_000 + g * 7919)}`;
    chats.push({ guid: `iMessage;+;${id}`, style: 43, chatIdentifier: id, participants: [...people] });
    members.push([...people]);
  }
  const pickChat = zipfPicker(chats.length, 0.6, random);
  let next = 0;
  return {
    chats,
    allowed: [...allowedSet],
    rows(from, n) {
      if (from !== next) throw new Error(`iMessage rows asked from ${from}, next is ${next}`);
      next = from + n;
      const rows: [string, string, string][] = [];
      let allowed = 0;
      for (let k = from; k < from + n; k++) {
        const c = pickChat();
        const people = members[c] as string[];
        const sender = people[Math.floor(random() * people.length)] as string;
        const ok = allowedSet.has(sender);
        if (ok) allowed++;
        rows.push([(chats[c] as ChatSpec).guid, sender, textFor("i", k, ok, random)]);
      }
      return { rows, allowed };
    },
  };
}

/** gw's allowlist file: person i is the i-th handle and the i-th Discord user (one of them past the shorter list). */
export function allowlistToml(handles: readonly string[], discordUsers: readonly string[]): string {
  const entry = (source: string, id: string, i: number) =>
    `[[entry]]\nsource = "${source}"\nid = "${id}"\nperson_id = "p${i}"\ndisplay_name = "Person ${i}"\n`;
  return [
    ...handles.map((h, i) => entry("device_messenger", h, i)),
    ...discordUsers.map((u, i) => entry("community_chat", u, i)),
  ].join("\n");
}
