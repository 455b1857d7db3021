/**
 * `gw mcp`'s attachment copies of a deleted message are never handed out again (extensions.md §4). gw mcp
 * listens to events and asks the service: at start, and after each GET /events page with a
 * `message.deleted`, every attachment id with a copy in the cache is asked for (GET /attachments/{id}, body
 * cancelled: the route has no HEAD) and the copies of each the service answers 404 are removed. Any other
 * answer (unreachable, 5xx) keeps them. Checks never overlap; one asked for meanwhile runs once more after.
 */
import type { Logger } from "../core/ports.ts";
import type { ApiClient, BodySink } from "./api-client.ts";
import type { AttachmentCache } from "./attachment-cache.ts";
import { type EventFollowDeps, followEventPages } from "./channel-events.ts";

/** Takes a 2xx body without reading it: only the status matters. */
const discard: BodySink = async (body) => {
  if (body instanceof ReadableStream) await body.cancel();
  else await body[Symbol.asyncIterator]().return?.();
  return null;
};

/** Asks for each cached id once; removes the copies of those answered 404. The removed ids. */
export async function purgeDeletedCopies(d: {
  api: ApiClient;
  cache: AttachmentCache;
  log: Logger;
  signal?: AbortSignal;
}): Promise<string[]> {
  const removed: string[] = [];
  for (const id of d.cache.cachedIds()) {
    if (d.signal?.aborted) break;
    const res = await d.api.call("GET", `/attachments/${id}`, {
      sink: discard,
      ...(d.signal ? { signal: d.signal } : {}),
    });
    if (res.status !== 404) continue;
    try {
      d.cache.forget(id);
      removed.push(id);
    } catch (err) {
      d.log.warn({ attachment_id: id, err: String(err) }, "attachment copy of a deleted message not removed");
    }
  }
  if (removed.length > 0)
    d.log.info({ attachment_ids: removed }, "attachment copies of deleted or expired attachments removed");
  return removed;
}

/** `check()` runs purgeDeletedCopies, never two at once: a call during a check makes it run once more. */
export function createCopyPurge(d: { api: ApiClient; cache: AttachmentCache; log: Logger }) {
  const stopping = new AbortController();
  let running: Promise<void> | null = null;
  let again = false;
  const loop = async () => {
    try {
      do {
        again = false;
        await purgeDeletedCopies({ ...d, signal: stopping.signal });
      } while (again && !stopping.signal.aborted);
    } finally {
      running = null;
    }
  };
  return {
    check(): Promise<void> {
      if (running) {
        again = true;
        return running;
      }
      running = loop();
      return running;
    },
    /** Ends a check under way (its request is aborted). */
    async stop(): Promise<void> {
      stopping.abort();
      await running;
    },
  };
}

/**
 * `gw mcp --extended` without a channel: follows GET /events from now only to run `check` after a page with
 * a `message.deleted` (a channel's own events follower does it there: channel-events.ts).
 */
export function followDeletions(deps: EventFollowDeps & { check(): Promise<void> }) {
  return followEventPages(deps, "attachment purge", async (events) => {
    if (events.some((e) => e.kind === "message.deleted")) await deps.check();
  });
}
