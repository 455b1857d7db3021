/**
 * The receiver's start after a stop or crash (runner): the journal's unfinished jobs are queued again, in
 * acceptance order, marked interrupted (a batch that had started runs again whole, its jobs keeping their
 * `batch`); a job whose runs were cut short MAX_RUNS times, or whose envelope cannot be read, is given up.
 * Acknowledgements (GW_RECEIVER_ACK_EMOJI): a requeued Discord job's reaction is put back (or kept, or put
 * for the first time when the setting is now on); the reactions of given-up jobs, and of finished jobs that
 * may still stand (a removal that never got through), are taken back.
 */
import type { Envelope } from "../core/envelope.ts";
import type { Clock, Logger } from "../core/ports.ts";
import type { JournalJob, ReceiverJournal } from "../store/receiver-journal.ts";
import type { ChannelWorkers, Job } from "./channel-workers.ts";
import type { Reactor } from "./reactions.ts";
import type { SeenSet } from "./seen-set.ts";

/** Runs started on one job without any ending (each cut short by a stop or crash) before it is given up. */
export const MAX_RUNS = 3;

export interface RecoverDeps {
  journal: ReceiverJournal;
  seen: SeenSet;
  workers: ChannelWorkers;
  reactor: Reactor | null;
  ackEmoji: string | null;
  clock: Clock;
  log: Logger;
}

export function recoverJobs(deps: RecoverDeps) {
  const { journal, seen, clock, log } = deps;
  const counts = { queued: 0, interrupted: 0, givenUp: 0 };
  const jobs: Job[] = [];
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
      const messageId = j.messageId ?? envelope?.id;
      if (j.reaction && messageId) deps.reactor?.release(j.deliveryId, { messageId, emoji: j.reaction });
      continue;
    }
    counts.queued += 1;
    if (j.runs > 0) counts.interrupted += 1;
    seen.add(j.deliveryId);
    holdReaction(deps, j, envelope);
    jobs.push({
      deliveryId: j.deliveryId,
      envelope,
      receivedAt: j.receivedAt,
      recovered: { earlierRuns: j.runs },
      ...(j.batch === undefined ? {} : { batch: j.batch }),
    });
  }
  deps.workers.submitAll(jobs);
  for (const s of journal.standingReactions())
    deps.reactor?.release(s.deliveryId, { messageId: s.messageId, emoji: s.reaction });
  return counts;
}

/** The requeued job's acknowledgement: the one it had, else the configured one on a Discord message. */
function holdReaction(deps: RecoverDeps, j: JournalJob, envelope: Envelope): void {
  if (!deps.reactor) return;
  let emoji = j.reaction ?? null;
  if (emoji === null && deps.ackEmoji !== null && envelope.source === "community_chat") {
    emoji = deps.ackEmoji;
    deps.journal.setReaction(j.deliveryId, emoji, envelope.id);
  }
  if (emoji !== null) deps.reactor.hold(j.deliveryId, envelope.id, emoji);
}

function parseEnvelope(json: string): Envelope | null {
  try {
    return JSON.parse(json) as Envelope;
  } catch {
    return null;
  }
}
