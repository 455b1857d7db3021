/**
 * A Messages-like chat.db for fault runs and the faults done to it from outside, as other programs
 * would: a writer holding BEGIN EXCLUSIVE, a new file put at the path (renamed over it), a truncated
 * file, something unreadable in its place, and each one undone. Rows are written by the demo's
 * Messages-like writer; nothing here touches gw's own files.
 */
import { Database } from "bun:sqlite";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { type ChatDbWriter, openChatDbWriter } from "../../../src/demo/chatdb-writer.ts";
import { entry, FRIEND, type Gw, STRANGER, startGw } from "./harness.ts";

export const FRIEND_CHAT = `any;-;${FRIEND}`;
export const STRANGER_CHAT = `any;-;${STRANGER}`;
const SIDE_FILES = ["-wal", "-shm", "-journal"];

export function chatDbFile(dir: string) {
  const path = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(path), { recursive: true });
  let writer: ChatDbWriter | null = openChatDbWriter(path);
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: STRANGER_CHAT, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  const closeWriter = () => {
    writer?.close();
    writer = null;
  };
  /**
   * Moves the file and its side files away (to `<path>.away*`), or back. The main file goes first on the
   * way out and last on the way back, so gw never opens it without the side files it belongs with.
   */
  const moveSet = (from: string, to: string) => {
    const order = to === path ? [...SIDE_FILES, ""] : ["", ...SIDE_FILES];
    for (const s of order) if (existsSync(from + s)) renameSync(from + s, to + s);
  };
  const dropSideFiles = () => {
    for (const s of SIDE_FILES) rmSync(path + s, { force: true });
  };
  /** Writes all of the WAL into the main file, so the file alone holds every row. */
  const checkpoint = () => {
    const db = new Database(path);
    db.run("PRAGMA busy_timeout = 2000");
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
  };
  /** A complete copy in rollback-journal mode (VACUUM INTO keeps every ROWID). */
  const copyTo = (target: string, journal: "DELETE" | "WAL") => {
    rmSync(target, { force: true });
    const db = new Database(path, { readonly: true });
    db.run(`VACUUM INTO '${target.replaceAll("'", "''")}'`);
    db.close();
    const c = new Database(target);
    c.run(`PRAGMA journal_mode = ${journal}`);
    c.close();
  };
  return {
    path,
    /** A message from the friend (or the stranger); the writer is reopened when a fault closed it. */
    say(text: string, from: string = FRIEND): number {
      writer ??= openChatDbWriter(path);
      return writer.message({ chatGuid: from === FRIEND ? FRIEND_CHAT : STRANGER_CHAT, from, text }).rowid;
    },
    maxRowid(): number {
      const db = new Database(path, { readonly: true });
      try {
        return (db.query("SELECT MAX(ROWID) AS m FROM message").get() as { m: number }).m;
      } finally {
        db.close();
      }
    },
    closeWriter,
    /** Another connection takes the write lock; call the result to commit and close it. */
    lock(): () => void {
      const db = new Database(path);
      db.run("BEGIN EXCLUSIVE");
      return () => {
        db.run("COMMIT");
        db.close();
      };
    },
    /**
     * A new file at the path (renamed over it): a rollback-journal copy holding every row plus
     * `extra` new messages written into it first.
     */
    replaceWithCopy(extra: string[]): void {
      closeWriter();
      const copy = `${path}.new`;
      copyTo(copy, "WAL");
      const w = openChatDbWriter(copy);
      for (const text of extra) w.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
      w.close();
      const c = new Database(copy);
      c.run("PRAGMA journal_mode = DELETE");
      c.close();
      dropSideFiles();
      renameSync(copy, path);
    },
    /** The path now holds the first half of the file (a new file); returns the undo. */
    truncatedCopy(): () => void {
      closeWriter();
      checkpoint();
      const bytes = readFileSync(path);
      moveSet(path, `${path}.away`);
      writeFileSync(`${path}.cut`, bytes.subarray(0, Math.floor(bytes.length / 2)));
      renameSync(`${path}.cut`, path);
      return () => {
        rmSync(path, { force: true });
        dropSideFiles();
        moveSet(`${path}.away`, path);
      };
    },
    /** The same file cut to 0 bytes in place (same inode); returns the undo (its bytes written back). */
    truncatedInPlace(): () => void {
      closeWriter();
      checkpoint();
      const bytes = readFileSync(path);
      truncateSync(path, 0);
      return () => writeFileSync(path, bytes);
    },
    /** Something gw cannot open at the path; returns the undo. */
    unreadable(how: "directory" | "not sqlite" | "chmod 000"): () => void {
      closeWriter();
      if (how === "chmod 000") {
        // A new file (gw notices the inode change and reopens) that its owner may not read.
        checkpoint();
        copyTo(`${path}.locked`, "DELETE");
        chmodSync(`${path}.locked`, 0o000);
        dropSideFiles();
        moveSet(path, `${path}.away`);
        renameSync(`${path}.locked`, path);
        return () => {
          rmSync(path, { force: true });
          moveSet(`${path}.away`, path);
        };
      }
      checkpoint();
      moveSet(path, `${path}.away`);
      if (how === "directory") mkdirSync(path);
      else writeFileSync(path, "these bytes are not a SQLite database\n".repeat(200));
      return () => {
        rmSync(path, { recursive: true, force: true });
        dropSideFiles();
        moveSet(`${path}.away`, path);
      };
    },
  };
}

export type ChatDbFile = ReturnType<typeof chatDbFile>;

/** `gw serve` (startGw) in `dir` reading `chat` every `pollMs` ms, with the friend allowlisted as "ann". */
export const serveChatDb = (dir: string, chat: ChatDbFile, pollMs: number): Promise<Gw> =>
  startGw({
    dir,
    env: { GW_CHAT_DB_PATH: chat.path, GW_DEVICE_POLL_INTERVAL_MS: String(pollMs) },
    allowlist: entry("device_messenger", FRIEND, "ann"),
  });
