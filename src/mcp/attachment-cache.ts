/**
 * `get_attachment`'s private cache (runner): one directory per user under the OS temp dir, 0700 and owned
 * by this user (else refused), files 0600. Each call streams to an exclusive `.part-` file and works on its
 * own uniquely named copy; only a copy whose path is returned is renamed (atomically) to
 * `<attachment id>.<ext>`, so parallel calls and other `gw mcp` processes never see half a file. Files older
 * than CACHE_MAX_AGE_MS (leftovers too) are pruned before each download; `forget` removes every file of one
 * id (a deleted message's: attachment-purge.ts), and `cachedIds` lists the ids that have any.
 */
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import type { Clock } from "../core/ports.ts";
import { extensionFor, SNIFF_BYTES, sniffType } from "./file-type.ts";

export const CACHE_MAX_AGE_MS = 24 * 3_600_000;
const OURS = /^att_[0-9A-HJKMNP-TV-Z]{26}\./;
/** "att_" + 26: the id at the start of each of our names. */
const ID_CHARS = 30;

export interface SavedFile {
  path: string;
  sizeBytes: number;
  /** The sniffed type, else the served one. */
  mime: string;
  /** What the magic bytes say, null when they are none of the known kinds. */
  sniffed: string | null;
}

export interface AttachmentCache {
  /** Creates (or checks) the directory and prunes old copies; throws with a readable reason. */
  prepare(): void;
  /** Streams `body` to a copy of this call's own, named with the sniffed type's extension (else `served`'s). */
  save(id: string, body: AsyncIterable<Uint8Array>, served: string): Promise<SavedFile>;
  /** A fresh path of this call's own for a converted copy of `id`. */
  scratch(id: string, ext: string): string;
  /** Renames the call's copy to `<id>.<ext>` and returns that absolute path. */
  keep(id: string, file: SavedFile): string;
  remove(path: string): void;
  /** The distinct attachment ids with any file here; none when the directory is missing or not ours. */
  cachedIds(): string[];
  /** Removes every file of `id`: its kept copy, converted and partial copies of calls under way. */
  forget(id: string): void;
}

/** The cache directory of user `user` under `tmpDir`. Pure. */
export const cacheDirFor = (tmpDir: string, user: string | number): string => join(tmpDir, `gw-mcp-${user}`);

function ensurePrivateDir(dir: string, uid: number | null): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (uid !== null && st.uid !== uid) throw new Error(`${dir} belongs to another user`);
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

function writeAll(fd: number, chunk: Uint8Array): void {
  for (let at = 0; at < chunk.length; ) at += writeSync(fd, chunk, at, chunk.length - at);
}

/** Removes our files (named `att_…`) older than CACHE_MAX_AGE_MS. */
function pruneOld(dir: string, nowMs: number): void {
  for (const name of readdirSync(dir)) {
    if (!OURS.test(name)) continue;
    const file = join(dir, name);
    try {
      const st = lstatSync(file);
      if (st.isFile() && nowMs - st.mtimeMs > CACHE_MAX_AGE_MS) rmSync(file, { force: true });
    } catch {
      // Gone meanwhile (another gw mcp pruned it).
    }
  }
}

/** Our file names in `dir`, read without creating it; none when it is missing or not a directory of ours. */
function ourNames(dir: string, uid: number | null): string[] {
  try {
    const st = lstatSync(dir);
    if (!st.isDirectory() || (uid !== null && st.uid !== uid)) return [];
    return readdirSync(dir).filter((name) => OURS.test(name));
  } catch {
    return [];
  }
}

/** Streams `body` into a new 0600 file (never an existing one); its size and first SNIFF_BYTES bytes. */
async function streamToFile(path: string, body: AsyncIterable<Uint8Array>) {
  const fd = openSync(path, "wx", 0o600);
  const head = new Uint8Array(SNIFF_BYTES);
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < SNIFF_BYTES) head.set(chunk.subarray(0, SNIFF_BYTES - size), size);
      writeAll(fd, chunk);
      size += chunk.length;
    }
  } catch (err) {
    rmSync(path, { force: true });
    throw err;
  } finally {
    closeSync(fd);
  }
  return { size, head: head.subarray(0, Math.min(size, SNIFF_BYTES)) };
}

export function createAttachmentCache(deps: {
  dir: string;
  uid: number | null;
  clock: Clock;
}): AttachmentCache {
  const { dir } = deps;
  const scratch = (id: string, ext: string) => join(dir, `${id}.${crypto.randomUUID()}.${ext}`);
  return {
    prepare() {
      ensurePrivateDir(dir, deps.uid);
      pruneOld(dir, deps.clock.now());
    },
    async save(id, body, served) {
      const part = join(dir, `${id}.part-${crypto.randomUUID()}`);
      const { size, head } = await streamToFile(part, body);
      const sniffed = sniffType(head);
      const mime = sniffed ?? served;
      const path = scratch(id, extensionFor(mime));
      renameSync(part, path);
      return { path, sizeBytes: size, mime, sniffed };
    },
    scratch,
    keep(id, file) {
      const path = join(dir, `${id}.${extensionFor(file.mime)}`);
      chmodSync(file.path, 0o600); // A converter's output has its own umask's mode.
      renameSync(file.path, path);
      return path;
    },
    remove: (path) => rmSync(path, { force: true }),
    cachedIds: () => [...new Set(ourNames(dir, deps.uid).map((name) => name.slice(0, ID_CHARS)))],
    forget(id) {
      for (const name of ourNames(dir, deps.uid))
        if (name.startsWith(`${id}.`)) rmSync(join(dir, name), { force: true });
    },
  };
}
