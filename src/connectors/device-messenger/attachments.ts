/**
 * Re-hosting inbound attachments (runner): whether each can be copied yet, and the copies into the attachment
 * store under new ids. A copy is asynchronous, so a large file never stalls the event loop. An attachment
 * that cannot be copied is left out with a warning: the message is delivered without it.
 */

import { createReadStream, existsSync, statSync } from "node:fs";
import { open, rm, stat } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import type { IdFactory } from "../../core/ids.ts";
import type { Logger } from "../../core/ports.ts";
import type { StagedAttachment } from "../../ingest/ingest.ts";
import type { ChatDbAttachment } from "./chat-db.ts";
import { mimeOf } from "./rows.ts";

export const TRANSFER_FINISHED = 5;

/** chat.db's `filename` may be `~/…`, absolute, or relative to ~/Library/Messages/Attachments. */
export function resolveAttachmentPath(filename: string, homeDir: string): string {
  if (filename === "~") return homeDir;
  if (filename.startsWith("~/")) return join(homeDir, filename.slice(2));
  if (isAbsolute(filename)) return filename;
  return join(homeDir, "Library/Messages/Attachments", filename);
}

export type AttachmentState = "ready" | { waiting: string } | { skip: string };

/**
 * `ready` to copy now; `waiting` while it is still arriving (no file name yet, transfer not finished, or the
 * file not on disk: chatdb.md §7); `skip` when it will never be copied (over GW_ATTACHMENT_MAX_BYTES).
 */
export function attachmentState(
  a: ChatDbAttachment,
  deps: { maxBytes: number; homeDir: string },
): AttachmentState {
  if (!a.filename?.trim()) return { waiting: "no file name yet" };
  if ((a.transfer_state ?? TRANSFER_FINISHED) !== TRANSFER_FINISHED)
    return { waiting: `transfer not finished (state ${a.transfer_state})` };
  const path = resolveAttachmentPath(a.filename, deps.homeDir);
  if (!existsSync(path)) return { waiting: "file missing (not downloaded yet, or offloaded)" };
  const size = statSync(path).size;
  if (size > deps.maxBytes) return { skip: `larger than GW_ATTACHMENT_MAX_BYTES (${size} bytes)` };
  return "ready";
}

/** Copies into a new file created 0600, so no instant (a crash included) leaves it with another mode. */
async function copyPrivate(source: string, target: string): Promise<void> {
  const out = await open(target, "wx", 0o600);
  try {
    for await (const chunk of createReadStream(source)) await out.write(chunk);
  } finally {
    await out.close();
  }
}

export interface StageDeps {
  dir: string;
  maxBytes: number;
  homeDir: string;
  ids: IdFactory;
  log: Logger;
  messageGuid: string;
  /** Runs one file's copy when a slot is free (INBOUND_FILES_AT_ONCE per connector). */
  slot: <T>(work: () => Promise<T>) => Promise<T>;
}

export async function stageAttachments(
  atts: readonly ChatDbAttachment[],
  deps: StageDeps,
): Promise<StagedAttachment[]> {
  const staged: StagedAttachment[] = [];
  for (const a of atts) {
    const state = attachmentState(a, deps);
    const note = (reason: string) =>
      deps.log.warn(
        { message_guid: deps.messageGuid, attachment_guid: a.guid, reason },
        "attachment not re-hosted",
      );
    if (state !== "ready") {
      note("waiting" in state ? state.waiting : state.skip);
      continue;
    }
    const source = resolveAttachmentPath(a.filename as string, deps.homeDir);
    const id = deps.ids.attachment();
    const target = join(deps.dir, id);
    try {
      const { size } = await stat(source);
      if (size > deps.maxBytes) {
        note(`larger than GW_ATTACHMENT_MAX_BYTES (${size} bytes)`);
        continue;
      }
      await deps.slot(() => copyPrivate(source, target));
      staged.push({ id, mime: mimeOf(a), sizeBytes: size, fileName: id, platformRef: a.guid });
    } catch (err) {
      await rm(target, { force: true });
      note(`copy failed: ${String(err)}`);
    }
  }
  return staged;
}
