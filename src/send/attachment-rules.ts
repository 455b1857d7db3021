/**
 * Rules for the `attachments` of a send (spec E, decisions.md, reliability.md §5): the shape of an item
 * (pure) and the checks of a local path (runner). A checked file is handed over open: the caller reads its
 * bytes from that descriptor, never by path again (a path can be swapped after the check), and closes it.
 * Every refusal is 400 VALIDATION_FAILED naming the field and the rule.
 */
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { isAbsolute, join } from "node:path";
import { AppError } from "../core/errors.ts";
import { ATTACHMENT_ID_PATTERN } from "../core/ids.ts";

export type AttachmentRef = { kind: "stored"; attachmentId: string } | { kind: "path"; path: string };

const ADAPTER_URL = new RegExp(
  `^(?:https?://[^/?#\\s]+)?/attachments/(${ATTACHMENT_ID_PATTERN.slice(1, -1)})$`,
);

function refused(field: string, rule: string, message: string): AppError {
  return new AppError("VALIDATION_FAILED", message, { field, rule }, { status: 400 });
}

/**
 * Checks the shape of one attachment item and says what it refers to: exactly one of `url`, adapter-hosted
 * (`/attachments/<id>` or `http(s)://<host>/attachments/<id>`), or `path`, absolute.
 */
export function parseAttachmentItem(item: { url?: string; path?: string }, index: number): AttachmentRef {
  const at = `attachments.${index}`;
  if ((item.url === undefined) === (item.path === undefined)) {
    throw refused(at, "exactly_one_of_url_or_path", `${at} must have exactly one of url or path.`);
  }
  if (item.url !== undefined) {
    const m = ADAPTER_URL.exec(item.url);
    if (!m)
      throw refused(
        `${at}.url`,
        "adapter_hosted_url",
        `${at}.url must be /attachments/<attachment id> on this gateway.`,
      );
    return { kind: "stored", attachmentId: m[1] as string };
  }
  const path = item.path as string;
  if (!isAbsolute(path) || path.includes("\0"))
    throw refused(`${at}.path`, "absolute_path", `${at}.path must be an absolute path.`);
  return { kind: "path", path };
}

export interface PathPolicy {
  homeDir: string;
  platform: NodeJS.Platform;
  /** The gateway's own files and folders (data dir, attachments, logs, allowlist, chat.db). */
  ownPaths: readonly string[];
  /** When set, a path must resolve inside one of these. */
  roots: readonly string[] | null;
  maxBytes: number;
}

export const DENIED_HOME_DIRS = [
  ".ssh",
  ".gnupg",
  ".aws",
  ".config/gw",
  "Library/Keychains",
  "Library/Messages",
];

/** A local file that passed every rule, held open: its bytes are read from `fd` (at most `size`). */
export interface CheckedFile {
  /** The real path that was checked (for logs and the file's name; never to read the bytes). */
  path: string;
  size: number;
  fd: number;
  close(): void;
}

/**
 * The readable regular file that passes every rule, opened; or a 400 naming the rule. The path is resolved
 * with realpath and compared by whole path components (case-insensitive on macOS) against the denied places
 * and the optional roots; the opened descriptor must be the regular file that was checked (same device and
 * inode before and after the open, and see stillAt) and under the size cap.
 */
export function checkLocalPath(path: string, field: string, policy: PathPolicy): CheckedFile {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw refused(field, "file_not_found", `${field} does not exist or cannot be resolved.`);
  }
  const fold = (p: string) => (policy.platform === "darwin" ? p.normalize("NFC").toLowerCase() : p);
  const inside = (p: string, dir: string) => {
    const a = fold(p);
    const b = fold(dir).replace(/\/+$/, "");
    return a === b || a.startsWith(`${b}/`);
  };
  const denied = [...DENIED_HOME_DIRS.map((d) => join(policy.homeDir, d)), ...policy.ownPaths].map(
    resolveIfExists,
  );
  const hit = denied.find((d) => inside(real, d));
  if (hit) throw refused(field, "denied_location", `${field} is inside a protected location (${hit}).`);
  if (policy.roots && !policy.roots.map(resolveIfExists).some((r) => inside(real, r))) {
    throw refused(field, "outside_send_roots", `${field} is outside GW_SEND_PATH_ROOTS.`);
  }
  const changed = () =>
    refused(field, "changed_while_checked", `${field} changed while it was being checked.`);
  let checked: Stats;
  try {
    checked = statSync(real);
  } catch {
    throw changed();
  }
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO must not hang the request; O_NOFOLLOW: no symlink swapped in after realpath.
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    throw refused(field, "not_readable", `${field} cannot be read.`);
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) throw refused(field, "not_regular_file", `${field} is not a regular file.`);
    if (!sameFile(opened, checked) || !stillAt(real, fd, opened)) throw changed();
    if (opened.size > policy.maxBytes)
      throw refused(field, "too_large", `${field} is larger than ${policy.maxBytes} bytes.`);
    let open = true;
    return {
      path: real,
      size: opened.size,
      fd,
      close: () => {
        if (open) closeSync(fd);
        open = false;
      },
    };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

const sameFile = (a: Stats, b: Stats) => a.dev === b.dev && a.ino === b.ino;

/**
 * After the open: `real` still resolves, through no symlink, to the opened file; where the kernel names
 * open files (Linux /proc), that name is `real` itself, which no swap of a directory in between escapes.
 */
function stillAt(real: string, fd: number, opened: Stats): boolean {
  try {
    if (realpathSync(real) !== real || !sameFile(statSync(real), opened)) return false;
    const named = `/proc/self/fd/${fd}`;
    return !existsSync(named) || readlinkSync(named) === real;
  } catch {
    return false;
  }
}

function resolveIfExists(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
