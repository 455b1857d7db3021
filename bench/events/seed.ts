/**
 * bench/events/events.ts's state database: MESSAGES one-to-one iMessage messages (every STRANGER_EVERY-th from
 * a stranger, so quarantined) and then EVENTS changes to them, both through createIngest in batches of
 * 500 as the iMessage connector hands them over (src/ingest/changes.ts decides each event's visibility:
 * a change to a quarantined message is stored but never shown). Changes: edits (5 in 10), reactions
 * added by an allowlisted friend (3 in 10), reactions removed (2 in 10), and every DELETE_EVERY-th a
 * delete of a message kept for it. Deterministic apart from ids and wall-clock stamps.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseAllowlist } from "../../src/allowlist/parse.ts";
import type { NormalizedChange } from "../../src/ingest/changes.ts";
import type { NormalizedMessage } from "../../src/ingest/ingest.ts";
import { openStore } from "../../src/store/store.ts";
import { seedIngest } from "../lib/seed.ts";
import {
  ALLOWLIST_TOML,
  type Cursors,
  DELETE_EVERY,
  EVENTS,
  FRIENDS,
  MESSAGES,
  STRANGER,
  STRANGER_EVERY,
} from "./settings.ts";

const BATCH = 500;
const START_MS = Date.UTC(2026, 0, 1);
const EMOJI = ["👍", "❤️", "😂", "‼️", "❓", "👎"];

export interface Seeded {
  messages: number;
  events: number;
  visible: number;
  byKind: Record<string, number>;
  cursors: Cursors;
  dbBytes: number;
  seedMs: number;
}

const senderOf = (i: number) =>
  i % STRANGER_EVERY === STRANGER_EVERY - 1 ? STRANGER : (FRIENDS[i % FRIENDS.length] as string);

function message(i: number): NormalizedMessage {
  const from = senderOf(i);
  return {
    source: "device_messenger",
    platformId: `bench-guid-${i}`,
    channel: { id: from, type: "dm", platformRef: `any;-;${from}` },
    sender: { id: from, displayName: from },
    service: "iMessage",
    text: `message ${i}`,
    replyToPlatformId: null,
    timestampMs: START_MS + i * 1000,
    attachments: [],
    raw: { ROWID: i + 1 },
    direction: "inbound",
  };
}

/** Messages kept for the deletes (no other change touches them): the last EVENTS / DELETE_EVERY. */
const deletePool = () => Math.min(Math.floor(MESSAGES / 2), Math.ceil(EVENTS / DELETE_EVERY));

function change(k: number, deletes: { next: number }): NormalizedChange {
  const pool = deletePool();
  const timestampMs = START_MS + MESSAGES * 1000 + k * 1000;
  if (k % DELETE_EVERY === DELETE_EVERY - 1 && deletes.next < pool) {
    const i = MESSAGES - pool + deletes.next++;
    return {
      kind: "delete",
      source: "device_messenger",
      targetPlatformId: `bench-guid-${i}`,
      timestampMs,
      dedupeKey: `bench:delete:${i}`,
    };
  }
  const i = (k * 7919) % (MESSAGES - pool);
  const base = { source: "device_messenger" as const, targetPlatformId: `bench-guid-${i}`, timestampMs };
  const r = k % 10;
  if (r < 5) return { ...base, kind: "edit", text: `message ${i}, edit ${k}`, dedupeKey: `bench:edit:${k}` };
  const reactor = FRIENDS[(k >> 3) % FRIENDS.length] as string;
  return {
    ...base,
    kind: "reaction",
    emoji: EMOJI[k % EMOJI.length] as string,
    added: r < 8,
    reactor: { id: reactor, displayName: reactor },
    service: "iMessage",
    byOwner: false,
    dedupeKey: `bench:reaction:${k}`,
  };
}

/** Seeds <dir>/data/gw.db and writes <dir>/allowlist.toml; returns the counts and the cases' cursors. */
export function seedEvents(dir: string): Seeded {
  const t0 = performance.now();
  mkdirSync(join(dir, "data"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "allowlist.toml"), ALLOWLIST_TOML);
  const parsed = parseAllowlist(ALLOWLIST_TOML);
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  const allowlist = parsed.allowlist;
  const dbPath = join(dir, "data/gw.db");
  const store = openStore(dbPath);
  const ingest = seedIngest(store, allowlist, { now: () => Date.now() }, { webhooks: false });
  for (let s = 0; s < MESSAGES; s += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, MESSAGES - s) }, (_, j) => message(s + j));
    ingest({ source: "device_messenger", messages: batch, cursor: String(s + batch.length) });
  }
  const deletes = { next: 0 };
  for (let s = 0; s < EVENTS; s += BATCH) {
    const changes = Array.from({ length: Math.min(BATCH, EVENTS - s) }, (_, j) => change(s + j, deletes));
    ingest({ source: "device_messenger", messages: [], cursor: null, changes });
  }
  const count = (sql: string) => (store.db.query(sql).get() as { n: number }).n;
  const byKind = Object.fromEntries(
    (
      store.db.query("SELECT kind, COUNT(*) AS n FROM events GROUP BY kind").all() as {
        kind: string;
        n: number;
      }[]
    ).map((r) => [r.kind, r.n]),
  );
  const ids = (
    store.db.query("SELECT id FROM events WHERE visible = 1 ORDER BY id").all() as { id: string }[]
  ).map((r) => r.id);
  const seeded: Seeded = {
    messages: count("SELECT COUNT(*) AS n FROM messages"),
    events: count("SELECT COUNT(*) AS n FROM events"),
    visible: ids.length,
    byKind,
    cursors: {
      start: "",
      middle: ids[Math.floor(ids.length / 2)] ?? "",
      end: ids[Math.max(0, ids.length - 51)] ?? "",
    },
    dbBytes: 0,
    seedMs: 0,
  };
  store.close();
  seeded.dbBytes = Bun.file(dbPath).size;
  seeded.seedMs = Math.round(performance.now() - t0);
  if (seeded.events !== EVENTS) throw new Error(`seeded ${seeded.events} events, wanted ${EVENTS}`);
  return seeded;
}
