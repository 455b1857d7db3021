/**
 * Runs catch-up tasks (runner). Each task runs in its channel's serial queue, so ahead of anything
 * queued there later, with at most CATCH_UP_CONCURRENCY requests at once (the slots are shared with the
 * DM opens); what it fetched is committed oldest first, a page per transaction with the channel's
 * position. A failed task keeps its channel's position (`holdsPosition`) and runs again every `retryMs`
 * until it succeeds; a channel gone or closed to the bot (403/404) is skipped with a warning; a rejected
 * token fails the connector. A round lasts while tasks or holds (planning under way) are pending; when
 * it ends its summary is logged once ("Discord catch-up done") and `onIdle` runs.
 */
import type { KeyedQueue } from "../../core/keyed-queue.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import { createSlots } from "../../core/slots.ts";
import { fetchMissed, HISTORY_PAGE, type HistoryPage } from "./catch-up.ts";
import type { CatchUpTask } from "./catch-up-plan.ts";
import type { Inbox } from "./inbox.ts";
import { isChannelGone, isTokenRejection } from "./platform-errors.ts";
import { CATCH_UP_CONCURRENCY } from "./tuning.ts";

/** How often a long catch-up logs its progress. */
const PROGRESS_EVERY_MS = 2000;

export interface RunnerDeps {
  queue: KeyedQueue;
  inbox: Inbox;
  /** The current link's history; throws when there is no link. */
  history: HistoryPage;
  bounds: { maxMessages: number; maxAgeMs: number };
  retryMs: number;
  clock: Clock;
  log: Logger;
  tokenRejected: () => void;
  signal: AbortSignal;
  /** A round ended: nothing pending, nothing waiting for a retry. */
  onIdle: () => void;
}

export function createCatchUpRunner(d: RunnerDeps) {
  const withSlot = createSlots(CATCH_UP_CONCURRENCY);
  /** Failed tasks by channel: their position waits until a retry succeeds. */
  const behind = new Map<string, CatchUpTask>();
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let round: { how: string; started: number; tasks: number; done: number; messages: number } | null = null;
  let pending = 0;
  let progress: ReturnType<typeof setInterval> | null = null;

  const open = (how: string) => {
    round ??= { how, started: d.clock.now(), tasks: 0, done: 0, messages: 0 };
    progress ??= setInterval(() => {
      if (!round) return;
      const s = Math.max(0.001, (d.clock.now() - round.started) / 1000);
      d.log.info(
        {
          channels_done: round.done,
          channels: round.tasks,
          messages: round.messages,
          messages_per_s: Math.round(round.messages / s),
          eta_s: round.done === 0 ? null : Math.ceil(((round.tasks - round.done) * s) / round.done),
        },
        "Discord catch-up in progress",
      );
    }, PROGRESS_EVERY_MS);
  };
  const settle = () => {
    pending -= 1;
    if (pending > 0 || !round) return;
    if (progress) clearInterval(progress);
    progress = null;
    const r = round;
    round = null;
    d.log.info(
      {
        session: r.how,
        channels: r.tasks,
        messages: r.messages,
        behind: behind.size,
        ms: d.clock.now() - r.started,
      },
      "Discord catch-up done",
    );
    if (behind.size === 0) d.onIdle();
  };

  const runOne = async (task: CatchUpTask): Promise<number> => {
    if (d.signal.aborted) return 0;
    try {
      const missed = await withSlot(() =>
        fetchMissed(
          {
            discordChannelId: task.discordChannelId,
            position: task.position,
            ...d.bounds,
            now: d.clock.now(),
          },
          d.history,
        ),
      );
      behind.delete(task.channelId);
      if (missed.skipped > 0)
        d.log.warn(
          {
            channel_id: task.channelId,
            kept: missed.messages.length,
            skipped: missed.skipped,
            skipped_at_least: missed.skippedAtLeast,
          },
          "catch-up bound reached (GW_COMMUNITY_CATCHUP_MAX_MESSAGES): the newest were stored, older missed messages were skipped",
        );
      for (let i = 0; i < missed.messages.length; i += HISTORY_PAGE) {
        const page = missed.messages.slice(i, i + HISTORY_PAGE);
        await d.inbox.commit(task.channelId, task.kind, page, d.inbox.stage(page));
      }
      return missed.messages.length;
    } catch (err) {
      if (isTokenRejection(err)) d.tokenRejected();
      else if (isChannelGone(err))
        d.log.warn(
          { channel_id: task.channelId, err: String(err) },
          "channel deleted or closed to the bot; not caught up",
        );
      else {
        behind.set(task.channelId, task);
        d.log.warn(
          { channel_id: task.channelId, err: String(err), retry_in_ms: d.retryMs },
          "catch-up of this channel failed; its position waits until a retry succeeds",
        );
        retryTimer ??= setTimeout(() => {
          retryTimer = null;
          run([...behind.values()], "retry");
        }, d.retryMs);
      }
      return 0;
    }
  };

  /** Queues each task in its channel now, before any later message of that channel. */
  const run = (tasks: readonly CatchUpTask[], how: string): void => {
    if (d.bounds.maxMessages === 0 || d.signal.aborted || tasks.length === 0) return;
    open(how);
    for (const task of tasks) {
      pending += 1;
      (round as NonNullable<typeof round>).tasks += 1;
      d.queue
        .push(task.channelId, () => runOne(task))
        .then((n) => {
          if (round) {
            round.done += 1;
            round.messages += n;
          }
        })
        .catch((err) =>
          d.log.error({ err: String(err), channel_id: task.channelId }, "Discord catch-up failed"),
        )
        .finally(settle);
    }
  };

  return {
    run,
    /** Keeps the round open (planning under way); call the returned function once when done. */
    hold(how: string): () => void {
      open(how);
      pending += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        settle();
      };
    },
    withSlot,
    holdsPosition: (channelId: string) => behind.has(channelId),
    /** Channels whose catch-up failed and waits for a retry. */
    behind: () => behind.size,
    /** Nothing pending and nothing waiting for a retry. */
    idle: () => pending === 0 && behind.size === 0,
    stop(): void {
      if (retryTimer) clearTimeout(retryTimer);
      if (progress) clearInterval(progress);
      retryTimer = null;
      progress = null;
    },
  };
}

export type CatchUpRunner = ReturnType<typeof createCatchUpRunner>;
