/**
 * The chat.db the iMessage benchmarks (pickup/pickup.ts, idle/idle.ts) play Messages on, shared by every watcher of
 * a run: macOS Messages' schema as gw's demo writes it (src/demo/chatdb-schema.ts), plus the columns of a
 * current Messages release that @photon-ai/imessage-kit 3.0.0 selects (its query names them; Sequoia and
 * Tahoe have them), so gw, imessage-kit and the Claude Code plugin all read the same file. The allowed
 * friend, a stranger and their chats; the allowlist each watcher gets for that friend.
 */
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { CHAT_DB_SCHEMA_SQL } from "../../src/demo/chatdb-schema.ts";
import { type ChatDbWriter, openChatDbWriter } from "../../src/demo/chatdb-writer.ts";
import { gwEnv } from "./gw-env.ts";
import { PATH } from "./settings.ts";

export const FRIEND = "+15555550100";
export const STRANGER = "+15555550199";
export const FRIEND_CHAT = `any;-;${FRIEND}`;
export const STRANGER_CHAT = `any;-;${STRANGER}`;

/** gw's allowlist: only the friend (every timed message comes from them). */
export const GW_ALLOWLIST = `[[entry]]
source = "device_messenger"
id = "${FRIEND}"
person_id = "ann"
display_name = "Ann"
`;

/** The Claude Code iMessage plugin's access.json (its default "allowlist" policy) for the same friend. */
export const CLAUDE_ACCESS = { dmPolicy: "allowlist", allowFrom: [FRIEND], groups: {}, pending: {} };

/**
 * Columns imessage-kit 3.0.0 selects that gw's schema subset leaves out, with the types and defaults of
 * the Sequoia dump (/work/shared/fixtures/chatdb); `date_recovered` and `ck_chat_id` are Tahoe's (macOS 26).
 */
const PEER_COLUMNS: [table: string, column: string, decl: string][] = [
  ...[
    "did_notify_recipient",
    "is_auto_reply",
    "is_forward",
    "is_played",
    "is_expirable",
    "is_kt_verified",
    "has_unseen_mention",
    "was_delivered_quietly",
    "is_sos",
    "is_critical",
    "sent_or_received_off_grid",
    "was_detonated",
    "share_status",
    "share_direction",
    "date_recovered",
  ].map((c): [string, string, string] => ["message", c, "INTEGER DEFAULT 0"]),
  ["message", "ck_chat_id", "TEXT DEFAULT NULL"],
  ["chat", "is_deleting_incoming_messages", "INTEGER DEFAULT 0"],
  ["attachment", "is_commsafety_sensitive", "INTEGER DEFAULT 0"],
  ["attachment", "emoji_image_short_description", "TEXT DEFAULT NULL"],
];

export const BENCH_CHAT_DB_SCHEMA_SQL = `${CHAT_DB_SCHEMA_SQL}\n${PEER_COLUMNS.map(
  ([t, c, d]) => `ALTER TABLE ${t} ADD COLUMN ${c} ${d};`,
).join("\n")}\n`;

/** `<home>/Library/Messages/chat.db`, where Messages keeps it. */
export const chatDbPathIn = (home: string): string => join(home, "Library/Messages/chat.db");

/**
 * Creates (or reopens) the chat.db with the friend's and the stranger's chats; WAL, one transaction per
 * message. `peerColumns: false` leaves out the peers' extra columns (gw's schema subset only).
 */
export function openBenchChatDb(path: string, o: { peerColumns?: boolean } = {}): ChatDbWriter {
  mkdirSync(dirname(path), { recursive: true });
  const schemaSql = o.peerColumns === false ? CHAT_DB_SCHEMA_SQL : BENCH_CHAT_DB_SCHEMA_SQL;
  const writer = openChatDbWriter(path, { schemaSql });
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: STRANGER_CHAT, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  return writer;
}

export type SyncMode = "NORMAL" | "FULL";

/** Sets the writer connection's `PRAGMA synchronous` and returns what SQLite reports back. */
export function setSynchronous(writer: ChatDbWriter, mode: SyncMode): SyncMode {
  writer.db.run(`PRAGMA synchronous = ${mode}`);
  const v = (writer.db.query("PRAGMA synchronous").get() as { synchronous: number }).synchronous;
  const got = ({ 1: "NORMAL", 2: "FULL" } as Record<number, SyncMode>)[v];
  if (got !== mode) throw new Error(`PRAGMA synchronous = ${mode} did not hold (reads ${v})`);
  return got;
}

/** The environment of a gw under test on this chat.db, every path inside `dir` (lib/gw-env.ts). */
export const gwEnvFor = (dir: string, chatDbPath: string) => gwEnv(dir, { GW_CHAT_DB_PATH: chatDbPath });

/** A peer's environment (imessage-kit, the Claude Code plugin): HOME and chat.db where Messages keeps them. */
export const peerEnvFor = (dir: string, chatDbPath: string) => ({
  PATH,
  HOME: dir,
  BENCH_CHAT_DB: chatDbPath,
});
