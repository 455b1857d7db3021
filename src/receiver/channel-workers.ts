/**
 * The receiver's channel workers (spec I): one worker per `channel_id`, which runs its jobs one at a
 * time in arrival order; channels run in parallel. A worker with nothing to do is evicted after
 * `idleTtlMs` (spec I.2). Not core/keyed-queue.ts: a worker is also counted (GW_RECEIVER_QUEUE_MAX,
 * /healthz), its run can be aborted, and its waiting jobs are handed back at stop. `stop` refuses new jobs, lets running ones finish within the grace, then aborts them
 * (their runs are stopped), and reports the jobs that never started, whose messages stay unread.
 */
import type { Envelope } from "../core/envelope.ts";
import type { Logger } from "../core/ports.ts";

export interface Job {
  deliveryId: string;
  envelope: Envelope;
  /** When the delivery was accepted (epoch ms). */
  receivedAt: number;
  /** Set on a job taken back from the journal at start: how many runs had started on it before. */
  recovered?: { earlierRuns: number };
}

export type RunJob = (job: Job, signal: AbortSignal) => Promise<void>;

interface Worker {
  queue: Job[];
  running: { job: Job; done: Promise<void>; abort: AbortController } | null;
  idle: ReturnType<typeof setTimeout> | null;
}

export function createChannelWorkers(deps: { run: RunJob; idleTtlMs: number; log: Logger }) {
  const workers = new Map<string, Worker>();
  let stopping = false;

  const pump = (channelId: string, w: Worker) => {
    if (w.running || stopping) return;
    const job = w.queue.shift();
    if (!job) {
      w.idle = setTimeout(() => workers.delete(channelId), deps.idleTtlMs);
      return;
    }
    const abort = new AbortController();
    const done = deps
      .run(job, abort.signal)
      .catch((err) =>
        deps.log.error({ delivery_id: job.deliveryId, err: String(err) }, "agent run failed to start"),
      )
      .finally(() => {
        w.running = null;
        pump(channelId, w);
      });
    w.running = { job, done, abort };
  };

  return {
    /** Queues a job behind its channel's earlier ones; false once stopping. */
    submit(job: Job): boolean {
      if (stopping) return false;
      const channelId = job.envelope.channel_id;
      let w = workers.get(channelId);
      if (!w) {
        w = { queue: [], running: null, idle: null };
        workers.set(channelId, w);
      }
      if (w.idle) clearTimeout(w.idle);
      w.idle = null;
      w.queue.push(job);
      // Started right away, so the run begins before the 204 is written (the 204 never waits for it).
      pump(channelId, w);
      return true;
    },
    /** Jobs of the channel waiting behind its running one. */
    waiting(channelId: string): number {
      return workers.get(channelId)?.queue.length ?? 0;
    },
    stats() {
      let running = 0;
      let queued = 0;
      for (const w of workers.values()) {
        if (w.running) running += 1;
        queued += w.queue.length;
      }
      return { workers: workers.size, running, queued };
    },
    async stop(graceMs: number): Promise<{ notRun: Job[]; stopped: Job[] }> {
      stopping = true;
      const notRun = [...workers.values()].flatMap((w) => w.queue.splice(0));
      const active = [...workers.values()].flatMap((w) => (w.running ? [w.running] : []));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const all = Promise.all(active.map((r) => r.done));
      const inTime = await Promise.race([
        all.then(() => true),
        new Promise<false>((resolve) => {
          timer = setTimeout(() => resolve(false), graceMs);
        }),
      ]);
      clearTimeout(timer);
      const late = inTime ? [] : [...workers.values()].flatMap((w) => (w.running ? [w.running] : []));
      for (const r of late) r.abort.abort();
      await all;
      for (const w of workers.values()) if (w.idle) clearTimeout(w.idle);
      workers.clear();
      return { notRun, stopped: late.map((r) => r.job) };
    },
  };
}

export type ChannelWorkers = ReturnType<typeof createChannelWorkers>;
