/**
 * Accepted deliveries are journaled (committed) before the 204, then queued per channel; `recover` queues
 * the unfinished ones again at start, in acceptance order, marked interrupted (recover.ts). A job is
 * finished when its run ends, whatever the exit code (timeout, failed start and /stop included); a run
 * stopped by shutdown is not, and runs again at the next start, like jobs still queued. A batched run's
 * jobs are started and finished together. With GW_RECEIVER_ACK_EMOJI a Discord job's reaction is held from
 * its acceptance to its run's end; with GW_RECEIVER_COMMANDS a phone command is carried out, never queued.
 */
import type { Clock, Logger } from "../core/ports.ts";
import type { ReceiverJournal } from "../store/receiver-journal.ts";
import type { RunOutcome } from "./agent-run.ts";
import { createChannelWorkers, type Job, type Run } from "./channel-workers.ts";
import type { Answerer } from "./command-answer.ts";
import { commandOf } from "./commands.ts";
import { createPhoneCommands } from "./phone-commands.ts";
import type { Reactor } from "./reactions.ts";
import { MAX_RUNS, recoverJobs } from "./recover.ts";
import type { SeenSet } from "./seen-set.ts";

export { MAX_RUNS };
/** Finished jobs stay in the journal as seen delivery ids this long, and at most this many. */
export const SEEN_KEEP_MS = 24 * 60 * 60 * 1000;
export const SEEN_KEEP_MAX = 100_000;
/** How often finished jobs are pruned after runs end (and once at start). */
export const PRUNE_EVERY_MS = 10 * 60 * 1000;

export type Accepted = "accepted" | "duplicate" | "busy" | "stopping";

export interface IntakeDeps {
  journal: ReceiverJournal;
  seen: SeenSet;
  run: (run: Run, signal: AbortSignal) => Promise<RunOutcome>;
  queueMax: number;
  idleTtlMs: number;
  clock: Clock;
  log: Logger;
  /** GW_RECEIVER_BATCH_MS (default 0: one run per job). */
  batchMs?: number;
  /** Keeps acknowledgement reactions; GW_RECEIVER_ACK_EMOJI (null: no new ones). */
  reactor?: Reactor | null;
  ackEmoji?: string | null;
  /** Answers phone commands; set when GW_RECEIVER_COMMANDS is on. */
  answerer?: Answerer | null;
}

export function createIntake(deps: IntakeDeps) {
  const { journal, seen, clock, log } = deps;
  const reactor = deps.reactor ?? null;
  const ackEmoji = deps.ackEmoji ?? null;
  let lastPrune = Number.NEGATIVE_INFINITY;
  let stopping = false;
  const prune = () => {
    lastPrune = clock.now();
    const removed = journal.prune({ before: lastPrune - SEEN_KEEP_MS, keep: SEEN_KEEP_MAX });
    if (removed > 0) log.debug({ removed }, "receiver journal pruned");
  };
  const run = journaledRun(deps, () => {
    if (clock.now() - lastPrune >= PRUNE_EVERY_MS) prune();
  });
  const workers = createChannelWorkers({
    run,
    idleTtlMs: deps.idleTtlMs,
    batchMs: deps.batchMs ?? 0,
    clock,
    log,
  });
  const commands = deps.answerer
    ? createPhoneCommands({ journal, seen, workers, reactor, answerer: deps.answerer, clock, log })
    : null;

  return {
    workers,
    /** Whether the delivery id was accepted before: the memory set first, then the journal. */
    seen(deliveryId: string): boolean {
      if (seen.has(deliveryId)) return true;
      if (!journal.has(deliveryId)) return false;
      seen.add(deliveryId);
      return true;
    },
    /**
     * Journals the job (committed on return) and queues it, unless its channel already has `queueMax`
     * jobs waiting or the receiver is stopping; then nothing is kept. A phone command is journaled and
     * carried out instead. A journal failure throws.
     */
    accept(job: Job, envelopeJson: string): Accepted {
      if (stopping) return "stopping";
      const command = commands ? commandOf(job.envelope) : null;
      if (command && commands) return commands.take(command, job);
      const channelId = job.envelope.channel_id;
      if (workers.waiting(channelId) >= deps.queueMax) return "busy";
      const reaction = reactor && ackEmoji && job.envelope.source === "community_chat" ? ackEmoji : null;
      const added = journal.add({
        deliveryId: job.deliveryId,
        channelId,
        envelope: envelopeJson,
        receivedAt: job.receivedAt,
        messageId: job.envelope.id,
        reaction,
      });
      seen.add(job.deliveryId);
      if (!added) return "duplicate";
      if (reaction) reactor?.hold(job.deliveryId, job.envelope.id, reaction);
      workers.submit(job);
      return "accepted";
    },
    /** An event delivery (extensions.md §1): acknowledged, remembered as seen, and never run. */
    acknowledge(deliveryId: string): void {
      seen.add(deliveryId);
    },
    /** Queues the jobs a stop or crash left unfinished, in acceptance order; prunes. Call once, first. */
    recover() {
      const counts = recoverJobs({ journal, seen, workers, reactor, ackEmoji, clock, log });
      prune();
      return counts;
    },
    stats: () => workers.stats(),
    /** Stops the channel workers (channel-workers.ts); what did not end stays unfinished in the journal. */
    stop(graceMs: number) {
      stopping = true;
      return workers.stop(graceMs);
    },
  };
}

/**
 * The agent run with its start counted and its end recorded (unless shutdown stopped it), for all its
 * jobs at once; then their acknowledgements are taken back.
 */
function journaledRun(deps: IntakeDeps, afterFinish: () => void) {
  const { journal, clock, log } = deps;
  return async (run: Run, signal: AbortSignal): Promise<void> => {
    const ids = run.jobs.map((j) => j.deliveryId);
    try {
      journal.markAllStarted(ids, ids.length > 1 ? (ids[0] as string) : null);
    } catch (err) {
      log.warn({ delivery_id: ids[0], err: String(err) }, "the start of a run could not be journaled");
    }
    let outcome: RunOutcome | "start-failed" = "start-failed";
    try {
      outcome = await deps.run(run, signal);
    } finally {
      if (outcome !== "stopped") {
        try {
          journal.markAllFinished(ids, clock.now(), outcome);
          afterFinish();
        } catch (err) {
          log.error(
            { delivery_id: ids[0], err: String(err) },
            "the end of a run could not be journaled; it runs again at the next start",
          );
        }
        for (const id of ids) deps.reactor?.release(id);
      }
    }
  };
}

export type Intake = ReturnType<typeof createIntake>;
