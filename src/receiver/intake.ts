/**
 * Accepted deliveries are journaled (committed) before the 204, then queued per channel; `recover` queues
 * the unfinished ones again at start, in acceptance order, marked interrupted. A job is finished when its
 * run ends, whatever the exit code (timeout and failed start included); a run stopped by shutdown is not,
 * and runs again at the next start, like jobs still queued. MAX_RUNS interrupted runs give a job up.
 */
import type { Envelope } from "../core/envelope.ts";
import type { Clock, Logger } from "../core/ports.ts";
import type { ReceiverJournal } from "../store/receiver-journal.ts";
import type { RunOutcome } from "./agent-run.ts";
import { type ChannelWorkers, createChannelWorkers, type Job } from "./channel-workers.ts";
import type { SeenSet } from "./seen-set.ts";

/** Runs started on one job without any ending (each cut short by a stop or crash) before it is given up. */
export const MAX_RUNS = 3;
/** Finished jobs stay in the journal as seen delivery ids this long, and at most this many. */
export const SEEN_KEEP_MS = 24 * 60 * 60 * 1000;
export const SEEN_KEEP_MAX = 100_000;
/** How often finished jobs are pruned after runs end (and once at start). */
export const PRUNE_EVERY_MS = 10 * 60 * 1000;

export type Accepted = "accepted" | "duplicate" | "busy" | "stopping";

export interface IntakeDeps {
  journal: ReceiverJournal;
  seen: SeenSet;
  run: (job: Job, signal: AbortSignal) => Promise<RunOutcome>;
  queueMax: number;
  idleTtlMs: number;
  clock: Clock;
  log: Logger;
}

export function createIntake(deps: IntakeDeps) {
  const { journal, seen, clock, log } = deps;
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
  const workers = createChannelWorkers({ run, idleTtlMs: deps.idleTtlMs, log });

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
     * jobs waiting or the receiver is stopping; then nothing is kept. A journal failure throws.
     */
    accept(job: Job, envelopeJson: string): Accepted {
      if (stopping) return "stopping";
      const channelId = job.envelope.channel_id;
      if (workers.waiting(channelId) >= deps.queueMax) return "busy";
      const added = journal.add({
        deliveryId: job.deliveryId,
        channelId,
        envelope: envelopeJson,
        receivedAt: job.receivedAt,
      });
      seen.add(job.deliveryId);
      if (!added) return "duplicate";
      workers.submit(job);
      return "accepted";
    },
    /** An event delivery (extensions.md §1): acknowledged, remembered as seen, and never run. */
    acknowledge(deliveryId: string): void {
      seen.add(deliveryId);
    },
    /** Queues the jobs a stop or crash left unfinished, in acceptance order; prunes. Call once, first. */
    recover() {
      const counts = recoverJobs(deps, workers);
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

/** The agent run with its start counted and its end recorded (unless shutdown stopped it). */
function journaledRun(deps: IntakeDeps, afterFinish: () => void) {
  const { journal, clock, log } = deps;
  return async (job: Job, signal: AbortSignal): Promise<void> => {
    try {
      journal.markStarted(job.deliveryId);
    } catch (err) {
      log.warn(
        { delivery_id: job.deliveryId, err: String(err) },
        "the start of a run could not be journaled",
      );
    }
    let outcome: RunOutcome | "start-failed" = "start-failed";
    try {
      outcome = await deps.run(job, signal);
    } finally {
      if (outcome !== "stopped")
        try {
          journal.markFinished(job.deliveryId, clock.now(), outcome);
          afterFinish();
        } catch (err) {
          log.error(
            { delivery_id: job.deliveryId, err: String(err) },
            "the end of a run could not be journaled; it runs again at the next start",
          );
        }
    }
  };
}

function recoverJobs(deps: IntakeDeps, workers: ChannelWorkers) {
  const { journal, seen, clock, log } = deps;
  const counts = { queued: 0, interrupted: 0, givenUp: 0 };
  for (const j of journal.unfinished()) {
    const envelope = parseEnvelope(j.envelope);
    if (j.runs >= MAX_RUNS || envelope === null) {
      counts.givenUp += 1;
      log.error(
        { delivery_id: j.deliveryId, channel_id: j.channelId, runs: j.runs },
        envelope === null
          ? "journaled envelope unreadable; given up (its message stays unread at the service)"
          : `${j.runs} runs interrupted; given up (its message stays unread at the service)`,
      );
      journal.markFinished(j.deliveryId, clock.now(), "given-up");
      continue;
    }
    counts.queued += 1;
    if (j.runs > 0) counts.interrupted += 1;
    seen.add(j.deliveryId);
    workers.submit({
      deliveryId: j.deliveryId,
      envelope,
      receivedAt: j.receivedAt,
      recovered: { earlierRuns: j.runs },
    });
  }
  return counts;
}

export type Intake = ReturnType<typeof createIntake>;

function parseEnvelope(json: string): Envelope | null {
  try {
    return JSON.parse(json) as Envelope;
  } catch {
    return null;
  }
}
