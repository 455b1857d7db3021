/**
 * Phone commands at intake (GW_RECEIVER_COMMANDS, extensions §7), a runner: a command (commands.ts) is
 * journaled as seen, already finished, and is never run. `/stop` drops the channel's waiting jobs (finished
 * in the same transaction, outcome DROPPED_OUTCOME, their acknowledgements taken back) and aborts its
 * running run (channel-workers.ts `cancel`: the process group is stopped as the time budget stops it);
 * their messages are marked read for the receiver's agent id, so no later run picks them up again;
 * `/new` marks the channel's next run; `/status` reads the channel's state. Each is answered in its channel
 * (command-answer.ts), /stop once its run has ended. A redelivered command changes and answers nothing.
 */
import type { Clock, Logger } from "../core/ports.ts";
import type { ReceiverJournal } from "../store/receiver-journal.ts";
import type { ChannelWorkers, Job } from "./channel-workers.ts";
import type { Answerer } from "./command-answer.ts";
import { type Command, NEW_ANSWER, statusAnswer, stopAnswer } from "./commands.ts";
import type { Reactor } from "./reactions.ts";
import type { SeenSet } from "./seen-set.ts";

/** The journal outcome of a waiting job a /stop dropped. */
export const DROPPED_OUTCOME = "dropped-by-stop";

export interface PhoneCommandDeps {
  journal: ReceiverJournal;
  seen: SeenSet;
  workers: ChannelWorkers;
  reactor: Reactor | null;
  answerer: Answerer;
  clock: Clock;
  log: Logger;
}

export function createPhoneCommands(deps: PhoneCommandDeps) {
  const { journal, workers, clock } = deps;
  return {
    /** Journals and carries out the command `job` is; "duplicate" when its delivery id is known. */
    take(command: Command, job: Job): "accepted" | "duplicate" {
      const { deliveryId, envelope } = job;
      const channelId = envelope.channel_id;
      const now = clock.now();
      const before = workers.state(channelId);
      const dropping = command === "stop" ? workers.waitingIds(channelId) : [];
      const added = journal.addCommand(
        { deliveryId, channelId, messageId: envelope.id, at: now, outcome: `command-${command}` },
        { deliveryIds: dropping, outcome: DROPPED_OUTCOME },
      );
      deps.seen.add(deliveryId);
      if (!added) return "duplicate";
      deps.log.info(
        {
          delivery_id: deliveryId,
          channel_id: channelId,
          command,
          running: before.running !== null,
          waiting: before.waiting,
        },
        `phone command /${command}`,
      );
      if (command === "status") deps.answerer.answer(envelope, deliveryId, () => statusAnswer(before, now));
      else if (command === "new") {
        workers.markFresh(channelId);
        deps.answerer.answer(envelope, deliveryId, () => NEW_ANSWER);
      } else {
        const { dropped, stopped, ended } = workers.cancel(channelId);
        for (const j of dropped) deps.reactor?.release(j.deliveryId);
        const alsoRead = [...stopped, ...dropped].map((j) => j.envelope.id);
        deps.answerer.answer(envelope, deliveryId, () => stopAnswer(before, now), { after: ended, alsoRead });
      }
      return "accepted";
    },
  };
}

export type PhoneCommands = ReturnType<typeof createPhoneCommands>;
