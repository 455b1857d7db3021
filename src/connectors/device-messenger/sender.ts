/**
 * Sending through Messages.app (runner). Runs GW_OSASCRIPT_PATH with a constant script on stdin and the
 * values in argv only. Error -1743 becomes 502 PLATFORM_AUTH, others 502 PLATFORM_SEND_FAILED; a timeout
 * means the outcome is unknown: 502, never retried. A send confirmed in chat.db returns the GUID of its new
 * `is_from_me` row, so the outbound record is linked; an unconfirmed one is logged.
 */
import {
  closeSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, join } from "node:path";
import { AppError } from "../../core/errors.ts";
import type { Clock, Logger, Spawner } from "../../core/ports.ts";
import { comparableText } from "../../ingest/ingest.ts";
import type { OutgoingAttachment, SendRequest, SendResult } from "../connector.ts";
import {
  fileToChat,
  parseOsascriptError,
  type ScriptCall,
  sendErrorCode,
  textToChat,
  textToParticipant,
} from "./applescript.ts";
import type { ChatDb } from "./chat-db.ts";
import { bodyText } from "./rows.ts";

export const OSASCRIPT_TIMEOUT_MS = 30_000;
/** After a timeout, osascript's process group gets SIGTERM, then SIGKILL this much later. */
export const OSASCRIPT_KILL_GRACE_MS = 2_000;
export const VERIFY_DEADLINE_MS = 2_000;
const VERIFY_POLL_MS = 100;
/** Messages reads a sent file asynchronously: keep the staged copy at least this long. */
export const STAGED_FILE_TTL_MS = 120_000;
/** Where files are copied for Messages to read (Messages may read only inside ~/Library/Messages). */
export const STAGING_DIR = "Library/Messages/Attachments/gw";
const STAGED_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const removeAfter = (dir: string, ms: number) =>
  setTimeout(() => rmSync(dir, { recursive: true, force: true }), ms).unref();

/**
 * Staged copies an earlier gw left behind (a kill before their TTL): those older than the TTL are
 * removed now, younger ones when it ends. Only folders named as gw names them (a UUID) are touched.
 */
export function sweepStagedSends(homeDir: string, nowMs: number, log: Logger): void {
  const root = join(homeDir, STAGING_DIR);
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return;
  }
  let removed = 0;
  for (const name of names) {
    if (!STAGED_NAME.test(name)) continue;
    const dir = join(root, name);
    try {
      const st = lstatSync(dir);
      if (!st.isDirectory()) continue;
      const left = STAGED_FILE_TTL_MS - (nowMs - st.mtimeMs);
      if (left > 0) removeAfter(dir, left);
      else {
        rmSync(dir, { recursive: true, force: true });
        removed += 1;
      }
    } catch (err) {
      log.warn({ dir, err: String(err) }, "a staged copy of an earlier send could not be removed");
    }
  }
  if (removed > 0) log.info({ removed }, "removed staged copies of sends an earlier gw left behind");
}

export interface SenderDeps {
  osascriptPath: string;
  /** Defaults to OSASCRIPT_TIMEOUT_MS. */
  osascriptTimeoutMs?: number;
  homeDir: string;
  env: Record<string, string>;
  spawner: Spawner;
  clock: Clock;
  log: Logger;
  /** The open chat.db, when it can be read (verification is skipped otherwise). */
  chatDb: () => ChatDb | null;
  sleep: (ms: number) => Promise<void>;
}

export const OWN_SENDER = { id: "me", displayName: "Me" };

/** Copies at most `size` bytes of a checked local file from its open descriptor (never by its path). */
function copyChecked(checked: { fd: number; size: number }, target: string): void {
  const out = openSync(target, "wx", 0o600);
  try {
    const buf = Buffer.allocUnsafe(Math.min(checked.size, 1024 * 1024) || 1);
    for (let at = 0; at < checked.size; ) {
      const n = readSync(checked.fd, buf, 0, Math.min(buf.length, checked.size - at), at);
      if (n === 0) break;
      writeSync(out, buf, 0, n);
      at += n;
    }
  } finally {
    closeSync(out);
  }
}

/** One osascript run: ok, or the failure's error number and stderr; a timeout is an unknown outcome. */
async function runScript(
  deps: SenderDeps,
  call: ScriptCall,
): Promise<{ ok: true } | { ok: false; osaCode: number | null; stderr: string }> {
  let r: Awaited<ReturnType<Spawner["run"]>>;
  try {
    r = await deps.spawner.run([deps.osascriptPath, "-", ...call.args], {
      stdin: call.script,
      timeoutMs: deps.osascriptTimeoutMs ?? OSASCRIPT_TIMEOUT_MS,
      killGraceMs: OSASCRIPT_KILL_GRACE_MS,
      env: deps.env,
    });
  } catch (err) {
    throw new AppError("PLATFORM_SEND_FAILED", `Cannot run ${deps.osascriptPath} (GW_OSASCRIPT_PATH).`, {
      reason: String(err instanceof Error ? err.message : err),
    });
  }
  if (r.timedOut) {
    throw new AppError(
      "PLATFORM_SEND_FAILED",
      "Messages did not answer in time; whether the message was sent is unknown.",
      {
        outcome: "unknown",
      },
    );
  }
  if (r.exitCode === 0) return { ok: true };
  return { ok: false, osaCode: parseOsascriptError(r.stderr), stderr: r.stderr.trim().slice(0, 500) };
}

function sendError(osaCode: number | null, stderr: string): AppError {
  const code = sendErrorCode(osaCode);
  const message =
    code === "PLATFORM_AUTH"
      ? "macOS does not allow gw to control Messages: allow it under System Settings → Privacy & Security → Automation."
      : "Messages could not send the message.";
  return new AppError(code, message, { osascript_error: osaCode, stderr });
}

/**
 * Copies the file where Messages may read it (a checked local file from its open descriptor), for
 * STAGED_FILE_TTL_MS; copies a killed gw left are swept at the next start (sweepStagedSends).
 */
function stage(homeDir: string, attachment: OutgoingAttachment): string {
  const dir = join(homeDir, STAGING_DIR, crypto.randomUUID());
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const target = join(dir, basename(attachment.path));
  if (attachment.checked) copyChecked(attachment.checked, target);
  else copyFileSync(attachment.path, target);
  removeAfter(dir, STAGED_FILE_TTL_MS);
  return target;
}

/**
 * The GUID of our new row in the chat, matched by decoded text (or the file's name) within
 * VERIFY_DEADLINE_MS. A text send that left only a ghost row (own, empty, outside any chat, the
 * recipient's handle for a one-to-one chat: chatdb.md §9.4) was misrouted by Messages (a macOS 26 fault):
 * that fails the send with 502 PLATFORM_SEND_FAILED.
 */
async function verify(
  deps: SenderDeps,
  req: SendRequest,
  text: string,
  fileName: string | null,
  after: number,
): Promise<string | null> {
  const db = deps.chatDb();
  if (!db) return null;
  const chatGuid = req.channel.platformRef;
  const want = comparableText(text);
  const deadline = deps.clock.now() + VERIFY_DEADLINE_MS;
  for (;;) {
    let ghost: string | null = null;
    for (const row of db.rowsAfter(after, 500)) {
      if (row.is_from_me !== 1) continue;
      if (row.chat_guid === null && want !== "" && (bodyText(row) ?? "").trim() === "") {
        if (req.channel.type === "group" || row.handle === req.channel.id) ghost = row.guid;
        continue;
      }
      if (row.chat_guid !== chatGuid) continue;
      if (want !== "" && comparableText(bodyText(row) ?? "") === want) return row.guid;
      if (want === "" && fileName && db.attachments(row.rowid).some((a) => a.transfer_name === fileName))
        return row.guid;
    }
    if (ghost)
      throw new AppError(
        "PLATFORM_SEND_FAILED",
        "Messages misrouted the send: it wrote an empty message outside the chat instead (a macOS 26 fault), so the text did not go out.",
        { reason: "misrouted", ghost_guid: ghost },
      );
    if (deps.clock.now() >= deadline) return null;
    await deps.sleep(VERIFY_POLL_MS);
  }
}

export function createSender(deps: SenderDeps) {
  /** A one-to-one chat id that Messages cannot find (-1728) is retried once by participant. */
  return async (req: SendRequest): Promise<SendResult> => {
    const chatGuid = req.channel.platformRef;
    const before = deps.chatDb()?.maxRowid() ?? Number.MAX_SAFE_INTEGER;
    const calls: ScriptCall[] = [];
    if (req.text.trim() !== "" || !req.attachment) calls.push(textToChat(req.text, chatGuid));
    const staged = req.attachment ? stage(deps.homeDir, req.attachment) : null;
    if (staged) calls.push(fileToChat(staged, chatGuid));

    for (const call of calls) {
      let r = await runScript(deps, call);
      if (!r.ok && r.osaCode === -1728 && req.channel.type === "dm" && call === calls[0] && !staged) {
        deps.log.warn(
          { channel_id: req.channel.id },
          "Messages did not find the chat id; retrying by participant",
        );
        r = await runScript(deps, textToParticipant(req.text, req.channel.id));
      }
      if (!r.ok) throw sendError(r.osaCode, r.stderr);
    }
    const platformId = await verify(deps, req, req.text, staged ? basename(staged) : null, before);
    if (!platformId)
      deps.log.warn(
        { channel_id: req.channel.id },
        "send not confirmed in chat.db yet; it will be linked when it appears",
      );
    return { platformId, sender: OWN_SENDER, raw: { chat_guid: chatGuid, confirmed: platformId !== null } };
  };
}
