/**
 * Re-hosting inbound attachments (runner): resolves chat.db's `filename` (`~`, absolute, or relative to
 * ~/Library/Messages/Attachments), and copies a finished transfer (state 5) that exists and fits
 * GW_ATTACHMENT_MAX_BYTES into the attachment store under a new attachment id (file 0600). Anything
 * else is left out with a warning: the message is delivered without it and the cursor never waits.
 */
import { chmodSync, copyFileSync, existsSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { IdFactory } from "../../core/ids.ts";
import type { Logger } from "../../core/ports.ts";
import type { StagedAttachment } from "../../ingest/ingest.ts";
import type { ChatDbAttachment } from "./chat-db.ts";
import { mimeOf } from "./rows.ts";

export const TRANSFER_FINISHED = 5;

export function resolveAttachmentPath(filename: string, homeDir: string): string {
  if (filename === "~") return homeDir;
  if (filename.startsWith("~/")) return join(homeDir, filename.slice(2));
  if (isAbsolute(filename)) return filename;
  return join(homeDir, "Library/Messages/Attachments", filename);
}

export function stageAttachments(
  atts: readonly ChatDbAttachment[],
  deps: { dir: string; maxBytes: number; homeDir: string; ids: IdFactory; log: Logger; messageGuid: string },
): StagedAttachment[] {
  const staged: StagedAttachment[] = [];
  for (const a of atts) {
    const why = skipReason(a, deps);
    if (why) {
      deps.log.warn(
        { message_guid: deps.messageGuid, attachment_guid: a.guid, reason: why },
        "attachment not re-hosted",
      );
      continue;
    }
    const source = resolveAttachmentPath(a.filename as string, deps.homeDir);
    const id = deps.ids.attachment();
    try {
      copyFileSync(source, join(deps.dir, id));
      chmodSync(join(deps.dir, id), 0o600);
    } catch (err) {
      deps.log.warn(
        { message_guid: deps.messageGuid, attachment_guid: a.guid, err: String(err) },
        "attachment copy failed",
      );
      continue;
    }
    staged.push({ id, mime: mimeOf(a), sizeBytes: statSync(source).size, fileName: id, platformRef: a.guid });
  }
  return staged;
}

function skipReason(a: ChatDbAttachment, deps: { maxBytes: number; homeDir: string }): string | null {
  if (!a.filename) return "no file name yet";
  if ((a.transfer_state ?? TRANSFER_FINISHED) !== TRANSFER_FINISHED)
    return `transfer not finished (state ${a.transfer_state})`;
  const path = resolveAttachmentPath(a.filename, deps.homeDir);
  if (!existsSync(path)) return "file missing (not downloaded or offloaded)";
  const size = statSync(path).size;
  if (size > deps.maxBytes) return `larger than GW_ATTACHMENT_MAX_BYTES (${size} bytes)`;
  return null;
}
