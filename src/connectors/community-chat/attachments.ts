/**
 * Re-hosting Discord attachments (runner): each file is streamed into the attachment store under a new
 * attachment id as soon as its message arrives and a slot is free. A failure of the link (dead or expired,
 * too big, not http(s), timeout) leaves that file out with a warning: the message is delivered without it
 * (spec). A failure to write here (a full disk, no permission) is not the link's: the message's files are
 * all removed and `LocalWriteError` thrown, so the message waits and is tried again like a store failure.
 * Nothing partial is left on disk.
 */
import { open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { IdFactory } from "../../core/ids.ts";
import type { Logger } from "../../core/ports.ts";
import type { StagedAttachment } from "../../ingest/ingest.ts";
import type { DiscordAttachment } from "./mapping.ts";

/** The largest file gw takes from Discord (its standard upload limit). */
export const DISCORD_ATTACHMENT_MAX_BYTES = 25 * 1024 * 1024;
export const DOWNLOAD_TIMEOUT_MS = 60_000;

export interface DownloadDeps {
  dir: string;
  maxBytes: number;
  timeoutMs: number;
  ids: IdFactory;
  log: Logger;
  fetch: typeof fetch;
  /** Aborted when the connector stops. */
  signal: AbortSignal;
  /** Runs one file's download when a slot is free (INBOUND_FILES_AT_ONCE per connector). */
  slot: <T>(work: () => Promise<T>) => Promise<T>;
}

class Skip extends Error {}

/** A file could not be written into the attachment store; the message is tried again later. */
export class LocalWriteError extends Error {}

export async function downloadAll(
  messageId: string,
  list: readonly DiscordAttachment[],
  deps: DownloadDeps,
): Promise<StagedAttachment[]> {
  const done = await Promise.allSettled(list.map((a) => deps.slot(() => downloadOne(messageId, a, deps))));
  const kept = done.flatMap((d) => (d.status === "fulfilled" && d.value !== null ? [d.value] : []));
  const failed = done.find((d) => d.status === "rejected");
  if (!failed) return kept;
  await Promise.all(kept.map((a) => rm(join(deps.dir, a.fileName as string), { force: true })));
  throw failed.reason;
}

/**
 * From the URL in the payload (a signed CDN link: the query is the credential, so no Authorization header is
 * sent), capped at DISCORD_ATTACHMENT_MAX_BYTES and GW_ATTACHMENT_MAX_BYTES, checked on the declared size
 * before and on the bytes while streaming.
 */
/** A filesystem step: its failure is this machine's, not the link's. */
async function local<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw new LocalWriteError(`cannot write the attachment here: ${(err as Error).message}`, { cause: err });
  }
}

async function downloadOne(
  messageId: string,
  a: DiscordAttachment,
  deps: DownloadDeps,
): Promise<StagedAttachment | null> {
  const cap = Math.min(DISCORD_ATTACHMENT_MAX_BYTES, deps.maxBytes);
  const id = deps.ids.attachment();
  const path = join(deps.dir, id);
  let written = false;
  try {
    if (typeof a.size === "number" && a.size > cap) throw new Skip(`larger than ${cap} bytes (${a.size})`);
    const url = new URL(String(a.url));
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new Skip(`not an http(s) link`);
    const res = await deps.fetch(url, {
      signal: AbortSignal.any([deps.signal, AbortSignal.timeout(deps.timeoutMs)]),
      redirect: "follow",
    });
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw new Skip(`the link answered ${res.status} (expired or deleted)`);
    }
    const file = await local(() => open(path, "wx", 0o600));
    written = true;
    let size = 0;
    try {
      for await (const chunk of res.body) {
        size += chunk.byteLength;
        if (size > cap) throw new Skip(`larger than ${cap} bytes`);
        await local(() => file.write(chunk));
      }
    } finally {
      await local(() => file.close());
    }
    const mime =
      a.content_type || res.headers.get("content-type")?.split(";")[0]?.trim() || "application/octet-stream";
    return { id, mime, sizeBytes: size, fileName: id, platformRef: a.id };
  } catch (err) {
    if (written) await rm(path, { force: true });
    if (err instanceof LocalWriteError) throw err;
    deps.log.warn(
      { message_id: messageId, attachment_id: a.id, reason: err instanceof Skip ? err.message : String(err) },
      "Discord attachment not re-hosted; the message is delivered without it",
    );
    return null;
  }
}
