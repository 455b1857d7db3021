/**
 * What happens to gw while it runs and dies (load generators). Messages arrive as bursts: rows
 * committed to chat.db (the friend, allowlisted; the stranger, quarantined) and Discord messages
 * posted on the fake (Ann, allowlisted; a stranger) — live to connected sessions, or only into
 * history while gw is down. Allowlisted texts carry the sink's `[doom]` / `[flaky]` markers at seeded
 * rates; some messages carry a file (a Discord attachment; a chat.db file, half of them landing after
 * their row, as downloads do, so rows wait on gw's pending list across kills). Sends go through POST /messages/send with an Idempotency-Key each; the ledger keeps every
 * key with every answer it got, so a key left without an answer is retried later with the same body.
 * The sources themselves (chat.db, the fake's history) are the record of what came in.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type Answer, call } from "./api.ts";
import { createChangeLedger } from "./changes.ts";
import type { Rng } from "./rng.ts";
import { DOOM, FLAKY } from "./sink.ts";
import { FRIEND, FRIEND_CHAT, STRANGER, STRANGER_CHAT, type World } from "./world.ts";

export interface Mix {
  /** Chance that an allowlisted message is answered 500 until it is dead. */
  doom: number;
  /** Chance that an allowlisted message is answered 500 on its first attempts. */
  flaky: number;
  /** Chance that a message comes from the stranger. */
  stranger: number;
}

/** Share of messages that carry a small file (re-hosted by gw before the message is stored). */
export const ATTACH_SHARE = 0.15;
/** Range of delays after which a late chat.db file lands (half of the chat.db files are late). */
export const LATE_FILE_MS = [50, 400] as const;

export const QUIET_MIX: Mix = { doom: 0.02, flaky: 0.1, stranger: 0.25 };
export const FAILING_MIX: Mix = { doom: 0.1, flaky: 0.5, stranger: 0.15 };

export interface BurstPlan {
  rows: number;
  posts: number;
  /** Over how long the burst is spread (ms). */
  spanMs: number;
  mix: Mix;
}

function textFor(rng: Rng, seq: number, allowed: boolean, mix: Mix): string {
  const marker = !allowed ? "" : rng.chance(mix.doom) ? ` ${DOOM}` : rng.chance(mix.flaky) ? ` ${FLAKY}` : "";
  return `chaos ${seq}${marker}`;
}

export interface BurstItem {
  kind: "row" | "post";
  stranger: boolean;
  text: string;
  /** Carries one small file: on Discord, a CDN attachment; in chat.db, a file on disk. */
  attach: boolean;
  /** chat.db only: the file lands LATE_FILE_MS after the row (the row waits on gw's pending list). */
  lateMs: number | null;
}

/** The burst's items in a seeded order, numbered from `firstSeq` (pure). */
export function planBurst(rng: Rng, plan: BurstPlan, firstSeq: number): BurstItem[] {
  const kinds = [...Array(plan.rows).fill("row"), ...Array(plan.posts).fill("post")] as ("row" | "post")[];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j] as "row" | "post", kinds[i] as "row" | "post"];
  }
  return kinds.map((kind, i) => {
    const stranger = rng.chance(plan.mix.stranger);
    const text = textFor(rng, firstSeq + i, !stranger, plan.mix);
    const attach = rng.chance(ATTACH_SHARE);
    const lateMs =
      attach && kind === "row" && rng.chance(0.5) ? rng.int(LATE_FILE_MS[0], LATE_FILE_MS[1]) : null;
    return { kind, stranger, text, attach, lateMs };
  });
}

function writeRow(w: World, ledger: Ledger, item: BurstItem): void {
  const chat = {
    chatGuid: item.stranger ? STRANGER_CHAT : FRIEND_CHAT,
    from: item.stranger ? STRANGER : FRIEND,
  };
  if (!item.attach) {
    const { rowid, guid } = w.chat.writer.message({ ...chat, text: item.text });
    ledger.changes.wrote({
      source: "device_messenger",
      platformId: guid,
      order: BigInt(rowid),
      rowid,
      sender: item.stranger ? "stranger" : "allowed",
      original: item.text,
      writtenAt: performance.now(),
      files: false,
    });
    return;
  }
  const path = join(w.dir, "Library/Messages/Attachments/chaos", `${item.text.split(" ")[1]}.txt`);
  const file = () => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `bytes of ${item.text}`);
  };
  if (item.lateMs === null) {
    file();
    w.chat.writer.message({ ...chat, text: item.text, attachments: [{ path }] });
    return;
  }
  // As Messages does while a file downloads: the row first (its body announces the file), the file later.
  const { rowid } = w.chat.writer.message({ ...chat, text: item.text, placeholders: 1 });
  ledger.later(
    Bun.sleep(item.lateMs).then(() => {
      file();
      w.chat.writer.attach(rowid, { path });
    }),
  );
}

/** Writes a planned burst at seeded pauses over `spanMs`; resolves when all of it is in chat.db or on the fake. */
export async function runBurst(w: World, rng: Rng, ledger: Ledger, plan: BurstPlan): Promise<number> {
  const items = planBurst(rng, plan, ledger.takeSeq(plan.rows + plan.posts));
  const gap = items.length > 0 ? plan.spanMs / items.length : 0;
  for (const item of items) {
    if (item.kind === "row") writeRow(w, ledger, item);
    else {
      const posted = w.fake.message(w.discord.channelId, {
        author: item.stranger ? w.discord.stranger : w.discord.ann,
        content: item.text,
        ...(item.attach ? { attachments: [{ filename: "note.txt", data: `bytes of ${item.text}` }] } : {}),
      });
      ledger.changes.wrote({
        source: "community_chat",
        platformId: posted.id as string,
        order: BigInt(posted.id as string),
        rowid: 0,
        sender: item.stranger ? "stranger" : "allowed",
        original: item.text,
        writtenAt: performance.now(),
        files: item.attach,
      });
    }
    if (gap > 0) await Bun.sleep(rng.next() * 2 * gap);
  }
  return items.length;
}

// --- sends ---

export type Platform = "imessage" | "discord";

export interface SendRecord {
  key: string;
  platform: Platform;
  channelId: string;
  text: string;
  answers: Answer[];
}

export function createLedger() {
  const sends = new Map<string, SendRecord>();
  let next = 0;
  let seq = 0;
  const pendingFiles = new Set<Promise<void>>();
  return {
    sends,
    /** Messages written and the platform changes made to them (changes.ts). */
    changes: createChangeLedger(),
    /** Keeps a file that lands later; `landed` waits for all of them. */
    later(p: Promise<void>): void {
      pendingFiles.add(p);
      void p.finally(() => pendingFiles.delete(p));
    },
    landed: (): Promise<unknown> => Promise.all([...pendingFiles]),
    /** Reserves `n` message numbers; returns the first. */
    takeSeq(n: number): number {
      seq += n;
      return seq - n + 1;
    },
    /** A new key with its body (the text carries the key as `<key>`, so platform posts can be counted per key). */
    fresh(w: World, platform: Platform): SendRecord {
      next += 1;
      const key = `k-${String(next).padStart(5, "0")}`;
      const r: SendRecord = {
        key,
        platform,
        channelId: platform === "imessage" ? FRIEND : `community_chat:channel:${w.discord.channelId}`,
        text: `chaos reply <${key}>`,
        answers: [],
      };
      sends.set(key, r);
      return r;
    },
    /** Keys that never got an answer: their outcome is unknown to the client, which retries them. */
    unanswered: (): SendRecord[] => [...sends.values()].filter((r) => r.answers.every((a) => a.status === 0)),
  };
}

export type Ledger = ReturnType<typeof createLedger>;

/** One POST /messages/send with the record's key and body; the answer is added to the record. */
export async function send(w: World, r: SendRecord): Promise<Answer> {
  const a = await call(w, "POST", "/messages/send", {
    body: { channel_id: r.channelId, text: r.text },
    headers: { "idempotency-key": r.key },
  });
  r.answers.push(a);
  return a;
}

/** The `<key>` token of a send's text, or null. */
export function keyIn(text: string): string | null {
  return /<(k-\d+)>/.exec(text)?.[1] ?? null;
}
