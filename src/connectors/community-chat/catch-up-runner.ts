/**
 * Runs catch-up tasks (runner). Each task runs in its channel's serial queue, so ahead of anything queued
 * there later, with at most CATCH_UP_CONCURRENCY requests at once (the slots are shared with the DM opens);
 * what it fetched is committed oldest first, a page per transaction with the channel's position. A failed
 * task keeps its channel's position (`holdsPosition`) and runs again every `retryMs` until it succeeds.
 */
import type { KeyedQueue } from "../../core/keyed-queue.ts";
import type { Clock, Logger } from "../../core/ports.ts";
import { createSlots } from "../../core/slots.ts";
import { fetchMissed, HISTORY_PAGE, type HistoryPage } from "./catch-up.ts";
import type { CatchUpTask } from "./catch-up-plan.ts";
import type { Inbox } from "./inbox.ts";
import type { DiscordMessage } from "./mapping.ts";
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

type Slots = ReturnType<typeof createSlots>;

/** What one channel missed, oldest first, with what the bound skipped logged; throws what the fetch threw. */
async function fetchFor(task: CatchUpTask, d: RunnerDeps, withSlot: Slots): Promise<DiscordMessage[]> {
  const missed = await withSlot(() =>
    fetchMissed(
      { discordChannelId: task.discordChannelId, position: task.position, ...d.bounds, now: d.clock.now() },
      d.history,
    ),
  );
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
  return missed.messages;
}

/**
 * Says why a task failed; true when it is worth running again later. A channel gone or closed to the bot
 * (403/404) is skipped with a warning; a rejected token fails the connector.
 */
function worthRetrying(task: CatchUpTask, err: unknown, d: RunnerDeps): boolean {
  if (isTokenRejection(err)) d.tokenRejected();
  else if (isChannelGone(err))
    d.log.warn(
      { channel_id: task.channelId, err: String(err) },
      "channel deleted or closed to the bot; not caught up",
    );
  else {
    d.log.warn(
      { channel_id: task.channelId, err: String(err), retry_in_ms: d.retryMs },
      "catch-up of this channel failed; its position waits until a retry succeeds",
    );
    return true;
  }
  return false;
}

/**
 * A round's counts and its progress log while it lasts: while tasks or holds (planning under way) are
 * pending. When it ends, its summary is logged once ("Discord catch-up done").
 */
function createRound(clock: Clock, log: Logger, how: string) {
  const r = { how, started: clock.now(), tasks: 0, done: 0, messages: 0 };
  const progress = setInterval(() => {
    const s = Math.max(0.001, (clock.now() - r.started) / 1000);
    log.info(
      {
        channels_done: r.done,
        channels: r.tasks,
        messages: r.messages,
        messages_per_s: Math.round(r.messages / s),
        eta_s: r.done === 0 ? null : Math.ceil(((r.tasks - r.done) * s) / r.done),
      },
      "Discord catch-up in progress",
    );
  }, PROGRESS_EVERY_MS);
  return {
    counts: r,
    end(behind: number): void {
      clearInterval(progress);
      log.info(
        { session: r.how, channels: r.tasks, messages: r.messages, behind, ms: clock.now() - r.started },
        "Discord catch-up done",
      );
    },
    stop: () => clearInterval(progress),
  };
}

/**
 * The open round: the first task opens one, the last to settle ends it (logged with the channels still
 * behind), and with none behind the connector is told it is idle.
 */
function createRounds(d: RunnerDeps, behind: () => number) {
  let round: ReturnType<typeof createRound> | null = null;
  let pending = 0;
  return {
    open(how: string) {
      round ??= createRound(d.clock, d.log, how);
      pending += 1;
      return round.counts;
    },
    settle() {
      pending -= 1;
      if (pending > 0 || !round) return;
      round.end(behind());
      round = null;
      if (behind() === 0 && !d.signal.aborted) d.onIdle();
    },
    pending: () => pending,
    stop: () => round?.stop(),
  };
}

export function createCatchUpRunner(d: RunnerDeps) {
  const withSlot = createSlots(CATCH_UP_CONCURRENCY);
  /** Failed tasks by channel: their position waits until a retry succeeds. */
  const behind = new Map<string, CatchUpTask>();
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  const rounds = createRounds(d, () => behind.size);
  const { open, settle } = rounds;

  const runOne = async (task: CatchUpTask): Promise<number> => {
    if (d.signal.aborted) return 0;
    try {
      const missed = await fetchFor(task, d, withSlot);
      behind.delete(task.channelId);
      for (let i = 0; i < missed.length; i += HISTORY_PAGE) {
        const page = missed.slice(i, i + HISTORY_PAGE);
        await d.inbox.commit(task.channelId, task.kind, page, d.inbox.stage(page));
      }
      return missed.length;
    } catch (err) {
      if (worthRetrying(task, err, d)) {
        behind.set(task.channelId, task);
        retryTimer ??= setTimeout(() => {
          retryTimer = null;
          run([...behind.values()], "retry");
        }, d.retryMs);
      }
      return 0;
    }
  };

  /**
   * Queues a task in its channel now, before any later message of that channel; `make` gives it when its
   * turn comes (null: nothing to do any more).
   */
  const schedule = (channelId: string, how: string, make: () => CatchUpTask | null): void => {
    const counts = open(how);
    counts.tasks += 1;
    d.queue
      .push(channelId, () => {
        const task = make();
        return task ? runOne(task) : Promise.resolve(0);
      })
      .then((n) => {
        counts.done += 1;
        counts.messages += n;
      })
      .catch((err) => d.log.error({ err: String(err), channel_id: channelId }, "Discord catch-up failed"))
      .finally(settle);
  };
  const enabled = () => d.bounds.maxMessages > 0 && !d.signal.aborted;

  const run = (tasks: readonly CatchUpTask[], how: string): void => {
    if (!enabled()) return;
    for (const task of tasks) schedule(task.channelId, how, () => task);
  };

  return {
    run,
    /**
     * A task whose position is known only when its turn comes (messages dropped past the queue bound:
     * fetched again from where the first of them was). False when catch-up is off (nothing queued).
     */
    runWhenDue(channelId: string, how: string, make: () => CatchUpTask | null): boolean {
      if (!enabled()) return false;
      schedule(channelId, how, make);
      return true;
    },
    /** Keeps the round open (planning under way); call the returned function once when done. */
    hold(how: string): () => void {
      open(how);
      let released = false;
      return () => {
        if (!released) settle();
        released = true;
      };
    },
    withSlot,
    holdsPosition: (channelId: string) => behind.has(channelId),
    /** Channels whose catch-up failed and waits for a retry. */
    behind: () => behind.size,
    /** Nothing pending and nothing waiting for a retry. */
    idle: () => rounds.pending() === 0 && behind.size === 0,
    stop(): void {
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      rounds.stop();
    },
  };
}

export type CatchUpRunner = ReturnType<typeof createCatchUpRunner>;
