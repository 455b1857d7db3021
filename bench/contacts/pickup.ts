/**
 * bench/contacts/contacts.ts, part (b): a chat.db row's pick-up with and without the address book, in the same run
 * and with bench/pickup/pickup.ts's own parts: two gw processes (pickup/gw.ts, built as `gw serve` builds it,
 * file notifications on), A with GW_CONTACTS_DIR (the folder of world.ts, the sender among its
 * cards) and B with GW_CONTACTS=0, each on its own home and chat.db (lib/chatdb.ts), each followed by an
 * agent on the unread long poll (pickup/watchers.ts longPoller) and with its ingest commits stamped inside
 * it (gwWatcher). Timing starts once A's log says it read every card. Then this script plays Messages
 * for both, alternating: per round one row to each chat.db, A then B or B then A in turn, each after a
 * seeded gap of BENCH_GAP_MIN_MS–BENCH_GAP_MAX_MS; BENCH_WARMUP untimed rounds, then BENCH_SAMPLES timed.
 * Sightings are tied to commits by text and summarised by pickup/match.ts, as in bench/pickup/pickup.ts.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { chatDbPathIn, FRIEND, FRIEND_CHAT, GW_ALLOWLIST, gwEnvFor, openBenchChatDb } from "../lib/chatdb.ts";
import { startChild } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import type { Session } from "../lib/session.ts";
import { collect, type FigureResult, settle } from "../pickup/match.ts";
import { GAP_MAX_MS, GAP_MIN_MS, HERE, POLL_MS, random, SAMPLES, WARMUP } from "../pickup/settings.ts";
import { type Commit, gwWatcher, longPoller, type Watcher } from "../pickup/watchers.ts";
import { type Book, waitContactsRead } from "./world.ts";

interface Side {
  label: string;
  writer: ChatDbWriter;
  watchers: Watcher[];
  commits: Commit[];
  logDir: string;
}

async function startSide(session: Session, label: string, env: Record<string, string>): Promise<Side> {
  const dir = session.tempDir(`gw-bench-contacts-${label}-`);
  writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);
  const chatDbPath = chatDbPathIn(dir);
  const writer = openBenchChatDb(chatDbPath);
  const { child, ready } = await startChild(`gw(${label})`, [join(HERE, "gw.ts"), "on"], {
    ...gwEnvFor(dir, chatDbPath),
    GW_DEVICE_POLL_INTERVAL_MS: String(POLL_MS),
    GW_DEFAULT_REGION: "US",
    ...env,
  });
  const gw = { child, port: ready.ready as number };
  const watchers = [gwWatcher(gw, null), await longPoller({ dir, chatDbPath }, gw)];
  return { label, writer, watchers, commits: [], logDir: join(dir, "logs") };
}

function commit(side: Side, nonce: string, i: number): void {
  const text = `contacts ${side.label} ${nonce} #${i}`;
  const tBegin = now();
  const { rowid } = side.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
  side.commits.push({ text, rowid, tBegin, tCommit: now(), warm: i < WARMUP });
}

export interface PickupSide {
  /** gw.ingest (stamped in gw) and gw.longpoll (the agent's long poll answered). */
  figures: Record<string, FigureResult>;
  /** Timed latencies of the long poll, in commit order (for the comparison). */
  longpoll: number[];
}

export interface PickupResult {
  samples: number;
  warmup: number;
  withContacts: PickupSide;
  without: PickupSide;
  wallS: number;
}

/** Each timed commit's long-poll latency, in order (stuck ones left out). */
function latencies(side: Side, sightings: Map<string, [string | number, number][]>): number[] {
  const first = new Map<string | number, number>();
  for (const [k, t] of sightings.get("gw.longpoll") ?? []) if (!first.has(k)) first.set(k, t);
  return side.commits.flatMap((c) => {
    const t = first.get(c.text);
    return c.warm || t === undefined ? [] : [t - c.tCommit];
  });
}

export async function pickupAB(o: Book & { session: Session }): Promise<PickupResult> {
  const sides: Side[] = [];
  const t0 = now();
  try {
    const a = await startSide(o.session, "contacts", { GW_CONTACTS_DIR: o.contactsDir });
    sides.push(a);
    sides.push(await startSide(o.session, "none", { GW_CONTACTS: "0" }));
    const read = await waitContactsRead(a.logDir);
    if (read.cards !== o.cards) throw new Error(`gw(contacts) read ${read.cards} cards, not ${o.cards}`);
    o.progress(
      `pick-up: gw(contacts) read ${read.cards} cards in ${read.ms} ms; ${WARMUP} + ${SAMPLES} rounds`,
    );
    const nonce = crypto.randomUUID().slice(0, 8);
    for (let i = 0; i < WARMUP + SAMPLES; i++) {
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        await Bun.sleep(GAP_MIN_MS + Math.floor(random() * (GAP_MAX_MS - GAP_MIN_MS + 1)));
        commit(side, nonce, i);
      }
      if (i >= WARMUP && (i - WARMUP + 1) % 50 === 0) o.progress(`  pick-up: ${i - WARMUP + 1}/${SAMPLES}`);
    }
    const out: PickupSide[] = [];
    for (const side of sides) {
      await settle(side.watchers, side.commits.at(-1));
      const figures = await collect(side.watchers, side.commits);
      const longpoll = side.watchers.find((w) => w.figures.some((f) => f.id === "gw.longpoll"));
      out.push({ figures, longpoll: latencies(side, (await longpoll?.sightings()) ?? new Map()) });
    }
    return {
      samples: SAMPLES,
      warmup: WARMUP,
      withContacts: out[0] as PickupSide,
      without: out[1] as PickupSide,
      wallS: Math.round((now() - t0) / 100) / 10,
    };
  } finally {
    for (const side of sides) {
      for (const w of side.watchers) await w.stop();
      side.writer.close();
    }
  }
}
