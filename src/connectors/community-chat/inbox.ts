/**
 * From Discord payloads to stored messages (runner). The caller runs `commit` in the channel's serial queue,
 * so a channel is stored in order: one ingest transaction per batch with the channel's new position, unless
 * `holdsPosition` says the channel has a gap to fill first. Once the connector stops (`signal`), nothing more
 * is stored and staged files are removed.
 */
import type { IdFactory } from "../../core/ids.ts";
import type { Logger } from "../../core/ports.ts";
import { createSlots } from "../../core/slots.ts";
import type { NormalizedChange } from "../../ingest/changes.ts";
import { type Ingest, type IngestBatch, removeStaged, type StagedAttachment } from "../../ingest/ingest.ts";
import type { ChannelName } from "../../store/channel-list.ts";
import { INBOUND_FILES_AT_ONCE } from "../connector.ts";
import { downloadAll } from "./attachments.ts";
import { dmName } from "./channel-names.ts";
import { type ChannelKind, classify, type DiscordMessage, toMessage } from "./mapping.ts";

export interface InboxDeps {
  attachmentDir: string;
  attachmentMaxBytes: number;
  downloadTimeoutMs: number;
  ingestRetryMaxMs: number;
  isStored: (platformId: string) => boolean;
  /** The bot's own user id, once known: its messages are never stored. */
  botId: () => string | null;
  holdsPosition: (channelId: string) => boolean;
  ids: IdFactory;
  log: Logger;
  fetch: typeof fetch;
  /** Aborted when the connector stops. */
  signal: AbortSignal;
  /** Waits, or less when the connector stops. */
  pause: (ms: number) => Promise<void>;
}

export type Staged = Promise<StagedAttachment[][]>;

/**
 * Stores with `write` until it holds (false: nothing to store, the connector stopped): a failed
 * transaction is logged once while it keeps failing and tried again with backoff (`again` prepares the
 * next try); `storeError` is the failure while it lasts.
 */
function storeRetry(deps: Pick<InboxDeps, "log" | "pause" | "ingestRetryMaxMs">) {
  let storeError: string | null = null;
  const storeUntilStored = async (
    channelId: string,
    what: string,
    write: () => Promise<boolean> | boolean,
    again: () => void = () => {},
  ): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        if (!(await write())) return;
        storeError = null;
        return;
      } catch (err) {
        if (storeError === null)
          deps.log.error(
            { err: String(err), channel_id: channelId },
            `storing Discord ${what} failed; retrying`,
          );
        storeError = String(err);
      }
      await deps.pause(Math.min(1_000 * 2 ** attempt, deps.ingestRetryMaxMs));
      again();
    }
  };
  return { storeUntilStored, storeError: () => storeError };
}

/**
 * Queues the attachment downloads of a batch at once (Discord's links expire), INBOUND_FILES_AT_ONCE at a
 * time per connector. A file that cannot be written here fails the whole batch's staging (its other files
 * removed): the batch is then stored like one whose transaction failed, staged again and tried again.
 */
function stager(deps: InboxDeps) {
  const downloads = {
    slot: createSlots(INBOUND_FILES_AT_ONCE),
    dir: deps.attachmentDir,
    maxBytes: deps.attachmentMaxBytes,
    timeoutMs: deps.downloadTimeoutMs,
    ids: deps.ids,
    log: deps.log,
    fetch: deps.fetch,
    signal: deps.signal,
  };
  return (payloads: readonly DiscordMessage[]): Staged => {
    const bot = deps.botId();
    const staged = Promise.allSettled(
      payloads.map((m) =>
        classify(m, bot) === "deliver" && (m.attachments ?? []).length > 0 && !deps.isStored(m.id)
          ? downloadAll(m.id, m.attachments ?? [], downloads)
          : Promise.resolve([]),
      ),
    ).then((done) => {
      const files = done.map((d) => (d.status === "fulfilled" ? d.value : []));
      const failed = done.find((d) => d.status === "rejected");
      if (!failed) return files;
      removeStaged(deps.attachmentDir, files.flat());
      throw failed.reason;
    });
    // A file that could not be written here fails the batch's store attempt when it is awaited (then
    // staged again); until then the rejection is not an unhandled one.
    staged.catch(() => {});
    return staged;
  };
}

export function createInbox(deps: InboxDeps) {
  let ingest: Ingest | null = null;
  const retry = storeRetry(deps);
  const storeUntilStored = retry.storeUntilStored;

  const stage = stager(deps);

  const discard = (staged: readonly StagedAttachment[][]) => removeStaged(deps.attachmentDir, staged.flat());

  /**
   * Waits for the batch's downloads and stores it with the channel's new position. A failed transaction
   * is tried again with its downloads made again (ingest removes the staged files of a failed batch).
   */
  const commit = async (
    channelId: string,
    kind: ChannelKind,
    payloads: readonly DiscordMessage[],
    first: Staged,
  ): Promise<void> => {
    const last = payloads.at(-1);
    if (!last) return;
    const bot = deps.botId();
    // Staged when the message came; staging that failed then (a full disk) is made again now, its turn.
    let staged = first.catch(() => stage(payloads));
    await storeUntilStored(
      channelId,
      "messages",
      async () => {
        const files = await staged;
        const target = ingest;
        if (deps.signal.aborted || !target) {
          discard(files);
          return false;
        }
        const dm = kind === "dm" ? dmName(last.channel_id, payloads, bot) : null;
        target({
          source: "community_chat",
          messages: payloads.flatMap((m, i) =>
            classify(m, bot) === "deliver" ? [toMessage(m, kind, files[i] ?? [])] : [],
          ),
          ...(dm ? { channelNames: [dm] } : {}),
          cursor: null,
          ...(deps.holdsPosition(channelId) ? {} : { channelCursor: { channelId, position: last.id } }),
        });
        return true;
      },
      () => {
        staged = stage(payloads);
      },
    );
  };

  /** Stores a batch without new messages (changes, channel names), tried again like messages. */
  const commitOther = (
    channelId: string,
    what: string,
    batch: Pick<IngestBatch, "changes" | "channelNames">,
  ) =>
    storeUntilStored(channelId, what, () => {
      const target = ingest;
      if (deps.signal.aborted || !target) return false;
      target({ source: "community_chat", messages: [], cursor: null, ...batch });
      return true;
    });

  return {
    stage,
    commit,
    /** Stores changes to stored messages (edits, deletes, reactions). */
    commitChanges: (channelId: string, changes: readonly NormalizedChange[]): Promise<void> =>
      commitOther(channelId, "changes", { changes }),
    /** Stores channels' names (the channel list). */
    commitNames: (names: readonly ChannelName[]): Promise<void> =>
      commitOther("", "channel names", { channelNames: names }),
    /** Where batches go; null stops storing. */
    setIngest: (target: Ingest | null) => {
      ingest = target;
    },
    /** The failure of the last store attempt while it keeps failing, else null. */
    storeError: retry.storeError,
  };
}

export type Inbox = ReturnType<typeof createInbox>;
