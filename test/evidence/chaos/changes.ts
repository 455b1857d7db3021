/**
 * Platform changes to messages already written (load generator): on iMessage, edits and unsends made
 * in place on chat.db rows as Messages makes them (writer.edit, writer.unsend) and tapbacks as new rows
 * (associated_message_type 2000–2007 add, 3000–3007 remove); on Discord, MESSAGE_UPDATE with new
 * content, MESSAGE_DELETE and reactions through the fake. Only messages gw has stored are changed (a
 * change to a message gw never stored is not an event: it arrives already changed), never one with a
 * file, never one already deleted; each iMessage row gets at most one in-place change (chat.db keeps
 * only the last state, so a second edit while gw is down could not be seen), and each change has an
 * identity no other change shares, so a stored event names exactly one change.
 *
 * What the product promises: every iMessage change (chat.db is re-read after any downtime), and the
 * Discord changes dispatched while gw was connected and caught up, at least GRACE_MS before the next
 * kill (Discord replays nothing to a new session, so a dispatch a kill catches before its commit is
 * gone like one made while gw is down — README "Edits, unsends and reactions"). Those are `promised`;
 * the rest may be stored at most once.
 */
import { Database } from "bun:sqlite";
import type { Rng } from "./rng.ts";
import type { Sender } from "./snapshot.ts";
import { FRIEND, FRIEND_CHAT, STRANGER, STRANGER_CHAT, type World } from "./world.ts";

/** A Discord change dispatched at least this long before the kill is owed an event. */
export const GRACE_MS = 750;
/** Messages older than this are no longer changed (Messages allows edits for 15 minutes). */
const MAX_TARGET_AGE_MS = 10 * 60_000;

export type ChangeKind = "message.edited" | "message.deleted" | "reaction.added" | "reaction.removed";
export type ChangeSource = "device_messenger" | "community_chat";

/** A message the world wrote that may be changed later. */
export interface Target {
  source: ChangeSource;
  platformId: string;
  /** chat.db ROWID (iMessage) or the snowflake. */
  order: bigint;
  rowid: number;
  sender: Exclude<Sender, "own">;
  /** The text it was written with. */
  original: string;
  writtenAt: number;
  files: boolean;
  /** iMessage: edited or unsent already (one in-place change per row). */
  changedInPlace: boolean;
  deleted: boolean;
  reacted: boolean;
  edits: number;
  /** Reactions standing now, as `emoji|reactor`, and every one ever used. */
  standing: Set<string>;
  used: Set<string>;
}

export interface ChangeRecord {
  n: number;
  source: ChangeSource;
  /** Platform id of the changed message. */
  target: string;
  targetAllowed: boolean;
  /** The text the message was written with. */
  original: string;
  kind: ChangeKind;
  /** An edit's new text. */
  text?: string;
  emoji?: string;
  /** A reaction's reactor as gw records it (handle, "me", Discord user id). */
  reactor?: string;
  /** performance.now() when it was made. */
  at: number;
  /** Owed exactly one event; null until the Discord change's fate is known (the next kill or stop). */
  promised: boolean | null;
}

/** The identity of a change, as a stored event shows it (pure). */
export function changeIdentity(
  source: string,
  target: string,
  kind: string,
  detail: { text?: string; emoji?: string; reactor?: string },
): string {
  const what =
    kind === "message.edited"
      ? (detail.text ?? "")
      : kind === "message.deleted"
        ? ""
        : `${detail.emoji ?? ""}|${detail.reactor ?? ""}`;
  return `${source}|${target}|${kind}|${what}`;
}

export const identityOf = (c: ChangeRecord) => changeIdentity(c.source, c.target, c.kind, c);

export function createChangeLedger() {
  const targets: Target[] = [];
  const byId = new Map<string, Target>();
  const records: ChangeRecord[] = [];
  return {
    targets,
    records,
    /** A message the world wrote (call it right after writing). */
    wrote(t: Omit<Target, "changedInPlace" | "deleted" | "reacted" | "edits" | "standing" | "used">): void {
      const full: Target = {
        ...t,
        changedInPlace: false,
        deleted: false,
        reacted: false,
        edits: 0,
        standing: new Set(),
        used: new Set(),
      };
      targets.push(full);
      byId.set(`${t.source}|${t.platformId}`, full);
    },
    target: (source: string, platformId: string) => byId.get(`${source}|${platformId}`),
    record(c: Omit<ChangeRecord, "n">): ChangeRecord {
      const r = { ...c, n: records.length + 1 };
      records.push(r);
      return r;
    },
    /** Settles the fate of the Discord changes still open: `killAt` (performance.now()), or null for a clean stop. */
    resolve(killAt: number | null): void {
      for (const r of records)
        if (r.promised === null) r.promised = killAt === null || killAt - r.at >= GRACE_MS;
    },
    /** Discord messages deleted (gone from the fake's history), as sources. */
    deletedDiscord: () => targets.filter((t) => t.source === "community_chat" && t.deleted),
  };
}

export type ChangeLedger = ReturnType<typeof createChangeLedger>;

/** Platform ids gw has stored (any status) and those it has tombstoned, read-only. */
function storedIds(w: World): { stored: Set<string>; deleted: Set<string> } {
  const db = new Database(w.env.GW_DB_PATH as string, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    const rows = db
      .query("SELECT source, platform_id, allowlist_status FROM messages WHERE platform_id IS NOT NULL")
      .all() as { source: string; platform_id: string; allowlist_status: string }[];
    const stored = new Set<string>();
    const deleted = new Set<string>();
    for (const r of rows) {
      stored.add(`${r.source}|${r.platform_id}`);
      if (r.allowlist_status === "deleted") deleted.add(`${r.source}|${r.platform_id}`);
    }
    return { stored, deleted };
  } catch {
    return { stored: new Set(), deleted: new Set() };
  } finally {
    db.close();
  }
}

/** Whether gw has stored every non-bot Discord message of the channel (its catch-up is behind it). */
export function discordCaughtUp(w: World): boolean {
  const { stored } = storedIds(w);
  const bot = w.fake.bot.id;
  return w.fake
    .history(w.discord.channelId)
    .filter((m) => (m.author as { id: string }).id !== bot)
    .every((m) => stored.has(`community_chat|${m.id as string}`));
}

const IMESSAGE_TAPBACKS = [0, 1, 2, 3, 4, 5, 6, 7] as const;
const DISCORD_EMOJI = ["👍", "❤️", "😂", "🎉", "<:party:123456789012345678>"] as const;
const CUSTOM_TAPBACK = "🎉";

function tapbackEmoji(t: number): string {
  return t === 6 ? CUSTOM_TAPBACK : (["❤️", "👍", "👎", "😂", "‼️", "❓", "", "🖼️"][t] as string);
}

export interface ChangePlan {
  imessage: number;
  discord: number;
  /** Over how long the changes are spread (ms). */
  spanMs: number;
}

/**
 * Makes the planned changes on messages gw has stored, at seeded pauses. Discord changes are only made
 * when `discordLive` (gw connected, caught up); they stay unresolved until the caller's `resolve`.
 * Resolves with the number made.
 */
export async function runChanges(
  w: World,
  rng: Rng,
  changes: ChangeLedger,
  plan: ChangePlan,
  discordLive: boolean,
): Promise<number> {
  const { stored, deleted } = storedIds(w);
  const now = performance.now();
  const open = (source: ChangeSource) =>
    changes.targets.filter(
      (t) =>
        t.source === source &&
        !t.deleted &&
        !t.files &&
        now - t.writtenAt < MAX_TARGET_AGE_MS &&
        stored.has(`${t.source}|${t.platformId}`) &&
        !deleted.has(`${t.source}|${t.platformId}`),
    );
  const kinds = [
    ...Array<ChangeSource>(plan.imessage).fill("device_messenger"),
    ...Array<ChangeSource>(discordLive ? plan.discord : 0).fill("community_chat"),
  ];
  for (let i = kinds.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [kinds[i], kinds[j]] = [kinds[j] as ChangeSource, kinds[i] as ChangeSource];
  }
  const gap = kinds.length > 0 ? plan.spanMs / kinds.length : 0;
  let made = 0;
  for (const source of kinds) {
    const pool = open(source).filter((t) => !t.deleted);
    if (pool.length > 0) {
      const t = rng.pick(pool);
      if (
        source === "device_messenger" ? imessageChange(w, rng, changes, t) : discordChange(w, rng, changes, t)
      )
        made += 1;
    }
    if (gap > 0) await Bun.sleep(rng.next() * 2 * gap);
  }
  return made;
}

/** What every change of target `t` records; `promised`: owed an event (null: decided at the next kill). */
const changeOf = <P extends boolean | null>(t: Target, promised: P) => ({
  source: t.source,
  target: t.platformId,
  targetAllowed: t.sender === "allowed",
  original: t.original,
  promised,
});

function imessageChange(w: World, rng: Rng, changes: ChangeLedger, t: Target): boolean {
  const base = changeOf(t, true);
  const roll = rng.next();
  if (!t.changedInPlace && roll < 0.3) {
    const text = `${t.original} ~edited`;
    changes.record({ ...base, kind: "message.edited", text, at: performance.now() });
    t.changedInPlace = true;
    t.edits += 1;
    w.chat.writer.edit(t.rowid, text);
    return true;
  }
  if (!t.changedInPlace && !t.reacted && roll < 0.45) {
    changes.record({ ...base, kind: "message.deleted", at: performance.now() });
    t.changedInPlace = true;
    t.deleted = true;
    w.chat.writer.unsend(t.rowid);
    return true;
  }
  // A tapback: from the message's own chat, by its other party or by the owner.
  const own = rng.chance(0.3);
  const reactor = own ? "me" : t.sender === "allowed" ? FRIEND : STRANGER;
  const standing = [...t.standing].filter((s) => s.endsWith(`|${reactor}`));
  const remove = standing.length > 0 && rng.chance(0.4);
  let type: number;
  if (remove) {
    const emoji = (rng.pick(standing) as string).split("|")[0] as string;
    type = IMESSAGE_TAPBACKS.find((x) => tapbackEmoji(x) === emoji) as number;
  } else {
    const fresh = IMESSAGE_TAPBACKS.filter((x) => !t.used.has(`add|${tapbackEmoji(x)}|${reactor}`));
    if (fresh.length === 0) return false;
    type = rng.pick([...fresh]);
  }
  const emoji = tapbackEmoji(type);
  const key = `${emoji}|${reactor}`;
  changes.record({
    ...base,
    kind: remove ? "reaction.removed" : "reaction.added",
    emoji,
    reactor,
    at: performance.now(),
  });
  t.reacted = true;
  t.used.add(`${remove ? "remove" : "add"}|${key}`);
  if (remove) t.standing.delete(key);
  else t.standing.add(key);
  const allowed = t.sender === "allowed";
  w.chat.writer.message({
    chatGuid: allowed ? FRIEND_CHAT : STRANGER_CHAT,
    from: own ? null : allowed ? FRIEND : STRANGER,
    isFromMe: own,
    text: "",
    associatedMessageType: (remove ? 3000 : 2000) + type,
    associatedMessageGuid: `p:0/${t.platformId}`,
    ...(type === 6 ? { associatedMessageEmoji: CUSTOM_TAPBACK } : {}),
  });
  return true;
}

function discordChange(w: World, rng: Rng, changes: ChangeLedger, t: Target): boolean {
  const base = changeOf(t, null);
  const channel = w.discord.channelId;
  const roll = rng.next();
  if (roll < 0.3) {
    const text = `${t.original} ~edit${t.edits + 1}`;
    changes.record({ ...base, kind: "message.edited", text, at: performance.now() });
    t.edits += 1;
    w.fake.edit(channel, t.platformId, text);
    return true;
  }
  if (roll < 0.42) {
    changes.record({ ...base, kind: "message.deleted", at: performance.now() });
    t.deleted = true;
    w.fake.remove(channel, [t.platformId]);
    return true;
  }
  const user = rng.chance(0.7) ? w.discord.ann : w.discord.stranger;
  const standing = [...t.standing].filter((s) => s.endsWith(`|${user.id}`));
  const remove = standing.length > 0 && rng.chance(0.4);
  let emoji: string;
  if (remove) emoji = (rng.pick(standing) as string).split("|")[0] as string;
  else {
    const fresh = DISCORD_EMOJI.filter((e) => !t.used.has(`add|${e}|${user.id}`));
    if (fresh.length === 0) return false;
    emoji = rng.pick([...fresh]);
  }
  const key = `${emoji}|${user.id}`;
  changes.record({
    ...base,
    kind: remove ? "reaction.removed" : "reaction.added",
    emoji,
    reactor: user.id,
    at: performance.now(),
  });
  t.reacted = true;
  t.used.add(`${remove ? "remove" : "add"}|${key}`);
  if (remove) t.standing.delete(key);
  else t.standing.add(key);
  w.fake.react(channel, t.platformId, user, emoji, remove);
  return true;
}
