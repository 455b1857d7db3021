/**
 * Everything the invariants are checked against, read into plain data (runner): gw.db (opened
 * read-only, between runs or beside a live gw serve), the sources as they stand (every chat.db row,
 * the fake Discord's history and the bot's posts), the sink's deliveries, the send ledger, the modes of
 * gw's files and whether a canary secret appears in any log or output. `checks.ts` judges it.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { decodeAttributedBody } from "../../../src/connectors/device-messenger/typedstream.ts";
import type { ChangeLedger, ChangeRecord } from "./changes.ts";
import type { SendRecord } from "./load.ts";
import type { SinkDelivery } from "./sink.ts";
import { CANARY, FRIEND, STRANGER, type World } from "./world.ts";

export type Sender = "allowed" | "stranger" | "own";

export interface SourceItem {
  source: "device_messenger" | "community_chat";
  /** chat.db GUID or Discord snowflake. */
  platformId: string;
  /** chat.db ROWID or snowflake, as a number for comparisons with cursors. */
  order: bigint;
  sender: Sender;
  text: string;
  /** Files the message carries (Discord posts). */
  files: number;
  /** Unsent (chat.db: emptied with an edit time) or deleted on Discord (gone from its history). */
  deleted?: boolean;
}

/** A stored event with the platform id of its message. */
export interface StoredEvent {
  id: string;
  kind: string;
  source: string;
  /** The changed message's platform id (null: not found). */
  platform_id: string | null;
  sender_id: string;
  data: string;
  dedupe_key: string;
}

export interface StoredMessage {
  id: string;
  source: string;
  platform_id: string | null;
  allowlist_status: string;
  direction: string;
  text: string;
}

export interface Snapshot {
  integrity: string;
  foreignKeyViolations: number;
  messages: StoredMessage[];
  deliveries: { id: string; message_id: string; status: string; attempt_count: number }[];
  attachments: { id: string; message_id: string; file_name: string | null }[];
  /** Names of the files in the attachment directory. */
  attachmentFiles: string[];
  /** chat.db ROWID cursor and the rows waiting for attachments (null before the first start). */
  deviceCursor: { position: bigint; pending: bigint[] } | null;
  /** The Discord channel's position (newest message id processed), if any. */
  discordCursor: bigint | null;
  sources: SourceItem[];
  /** The bot's posts on the fake Discord (gw's sends), text only. */
  botPosts: string[];
  sink: SinkDelivery[];
  sends: SendRecord[];
  /** Events in gw.db, and every platform change the world made (changes.ts). */
  events: StoredEvent[];
  changes: ChangeRecord[];
  files: { path: string; mode: number; dir: boolean }[];
  /** Files (or "gw serve output") in which a canary secret was found. */
  canaryLeaks: string[];
}

/** Every event with its message's platform id (an open gw.db connection). */
export function readEvents(db: Database): StoredEvent[] {
  return db
    .query(
      `SELECT e.id, e.kind, e.source, m.platform_id, e.sender_id, e.data, e.dedupe_key
       FROM events e LEFT JOIN messages m ON m.id = e.message_id ORDER BY e.id`,
    )
    .all() as StoredEvent[];
}

function readGwDb(path: string, discordChannelId: string) {
  const db = new Database(path, { readonly: true });
  try {
    db.run("PRAGMA busy_timeout = 5000");
    const integrity = (db.query("PRAGMA integrity_check").get() as { integrity_check: string })
      .integrity_check;
    const foreignKeyViolations = db.query("PRAGMA foreign_key_check").all().length;
    const messages = db
      .query("SELECT id, source, platform_id, allowlist_status, direction, text FROM messages")
      .all() as StoredMessage[];
    const deliveries = db
      .query("SELECT id, message_id, status, attempt_count FROM webhook_deliveries")
      .all() as Snapshot["deliveries"];
    const attachments = db
      .query("SELECT id, message_id, file_name FROM attachments")
      .all() as Snapshot["attachments"];
    const events = readEvents(db);
    const cursor = db
      .query("SELECT position, state FROM connector_cursors WHERE source = 'device_messenger'")
      .get() as { position: string; state: string | null } | null;
    const pending = (JSON.parse(cursor?.state ?? "{}").pending ?? []) as { rowid: number }[];
    const discord = db
      .query<{ cursor: string | null }, [string]>("SELECT cursor FROM channels WHERE platform_ref = ?1")
      .get(discordChannelId);
    return {
      integrity,
      foreignKeyViolations,
      messages,
      deliveries,
      attachments,
      events,
      deviceCursor: cursor
        ? { position: BigInt(cursor.position), pending: pending.map((p) => BigInt(p.rowid)) }
        : null,
      discordCursor: discord?.cursor ? BigInt(discord.cursor) : null,
    };
  } finally {
    db.close();
  }
}

function chatDbSources(w: World): SourceItem[] {
  const rows = w.chat.writer.db
    .query(
      `SELECT m.ROWID AS rowid, m.guid AS guid, m.is_from_me AS from_me, m.text AS text,
              m.attributedBody AS body, h.id AS handle, m.is_empty AS empty, m.date_edited AS edited,
              m.date_retracted AS retracted,
              (SELECT COUNT(*) FROM message_attachment_join j WHERE j.message_id = m.ROWID) AS files
       FROM message m LEFT JOIN handle h ON h.ROWID = m.handle_id
       WHERE m.associated_message_type = 0 ORDER BY m.ROWID`,
    )
    .all() as {
    rowid: number;
    guid: string;
    from_me: number;
    text: string | null;
    body: Uint8Array | null;
    handle: string | null;
    empty: number;
    edited: number | null;
    retracted: number | null;
    files: number;
  }[];
  return rows.map((r) => ({
    source: "device_messenger",
    platformId: r.guid,
    order: BigInt(r.rowid),
    sender: r.from_me ? "own" : r.handle === FRIEND ? "allowed" : r.handle === STRANGER ? "stranger" : "own",
    text: r.text ?? decodeAttributedBody(r.body) ?? "",
    files: r.files,
    // Unsent as the writer unsends (a real Mac's shape sets date_retracted; the older one is_empty).
    ...((r.retracted ?? 0) > 0 || (r.empty === 1 && (r.edited ?? 0) > 0) ? { deleted: true } : {}),
  }));
}

function discordSources(w: World, changes: ChangeLedger): SourceItem[] {
  const bot = w.fake.bot.id;
  const gone: SourceItem[] = changes.deletedDiscord().map((t) => ({
    source: "community_chat",
    platformId: t.platformId,
    order: t.order,
    sender: t.sender,
    text: "",
    files: 0,
    deleted: true,
  }));
  const live: SourceItem[] = w.fake
    .history(w.discord.channelId)
    .map((m) => ({
      id: m.id as string,
      author: (m.author as { id: string }).id,
      content: m.content as string,
      files: ((m.attachments as unknown[] | undefined) ?? []).length,
    }))
    .filter((m) => m.author !== bot)
    .map((m) => ({
      source: "community_chat",
      platformId: m.id,
      order: BigInt(m.id),
      sender: m.author === w.discord.ann.id ? "allowed" : "stranger",
      text: m.content,
      files: m.files,
    }));
  return [...live, ...gone].sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
}

function modes(w: World): Snapshot["files"] {
  const out: Snapshot["files"] = [];
  const db = w.env.GW_DB_PATH as string;
  const add = (path: string) => {
    if (!existsSync(path)) return;
    const s = statSync(path);
    out.push({ path, mode: s.mode & 0o777, dir: s.isDirectory() });
  };
  add(dirname(db));
  for (const suffix of ["", "-wal", "-shm"]) add(db + suffix);
  for (const dir of [w.env.GW_ATTACHMENT_DIR as string, w.env.GW_LOG_DIR as string]) {
    add(dir);
    if (existsSync(dir)) for (const f of readdirSync(dir)) add(join(dir, f));
  }
  return out;
}

function canaryLeaks(w: World): string[] {
  const secrets = Object.values(CANARY);
  const leaks: string[] = [];
  const logDir = w.env.GW_LOG_DIR as string;
  if (existsSync(logDir))
    for (const f of readdirSync(logDir)) {
      const path = join(logDir, f);
      if (statSync(path).isFile() && secrets.some((s) => readFileSync(path, "utf8").includes(s)))
        leaks.push(path);
    }
  for (const [i, r] of w.runs.entries()) {
    const { stdout, stderr } = r.output();
    if (secrets.some((s) => stdout.includes(s) || stderr.includes(s)))
      leaks.push(`gw serve run ${i + 1} output`);
  }
  return leaks;
}

/** A light snapshot for the check after every kill; `full` adds file modes and the canary search. */
export function snapshot(
  w: World,
  ledger: { sends: Map<string, SendRecord>; changes: ChangeLedger },
  full: boolean,
): Snapshot {
  const gw = readGwDb(w.env.GW_DB_PATH as string, w.discord.channelId);
  const attachmentDir = w.env.GW_ATTACHMENT_DIR as string;
  return {
    ...gw,
    attachmentFiles: existsSync(attachmentDir) ? readdirSync(attachmentDir) : [],
    sources: [...chatDbSources(w), ...discordSources(w, ledger.changes)],
    botPosts: w.fake.posted.map((p) => String(p.body.content ?? "")),
    sink: w.sink.deliveries(),
    sends: [...ledger.sends.values()],
    changes: ledger.changes.records.map((c) => ({ ...c })),
    files: full ? modes(w) : [],
    canaryLeaks: full ? canaryLeaks(w) : [],
  };
}
