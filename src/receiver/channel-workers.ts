/**
 * The receiver's channel workers (spec I): one worker per `channel_id`, which runs its jobs one at a
 * time in arrival order; channels run in parallel. Which waiting jobs a run takes, and when, is planBatch's
 * (batch.ts): one job at once unless GW_RECEIVER_BATCH_MS folds a burst into one run. A worker with nothing
 * to do is evicted after `idleTtlMs` (spec I.2). Not core/keyed-queue.ts: a worker is also counted
 * (GW_RECEIVER_QUEUE_MAX, /healthz), its run can be aborted, and its waiting jobs are handed back at stop.
 * `cancel` (/stop) aborts a channel's run with STOP_REASON and drops its queue. `stop` refuses new jobs,
 * lets running ones finish within the grace, then aborts them (their runs are stopped), and reports the
 * jobs that never started, whose messages stay unread.
 */
import type { Envelope } from "../core/envelope.ts";
import type { Clock, Logger } from "../core/ports.ts";
import { planBatch } from "./batch.ts";
import type { ChannelState } from "./commands.ts";

export interface Job {
  deliveryId: string;
  envelope: Envelope;
  /** When the delivery was accepted (epoch ms). */
  receivedAt: number;
  /** Set on a job taken back from the journal at start: how many runs had started on it before. */
  recovered?: { earlierRuns: number };
  /** Set on the jobs of a batch taken back from the journal: they run again together. */
  batch?: string;
}

/** One agent run: its jobs in arrival order (one unless batched), and whether a /new came before it. */
export interface Run {
  jobs: Job[];
  fresh: boolean;
}

export type RunJobs = (run: Run, signal: AbortSignal) => Promise<void>;

/** The abort reason of a run ended by /stop (a shutdown aborts without a reason). */
export const STOP_REASON = "gw-receiver-stop-command";

interface Running {
  run: Run;
  startedAt: number;
  done: Promise<void>;
  abort: AbortController;
}

interface Worker {
  queue: Job[];
  running: Running | null;
  idle: ReturnType<typeof setTimeout> | null;
  /** Waits for the oldest job's batch window to close. */
  window: ReturnType<typeof setTimeout> | null;
  fresh: boolean;
}

export interface ChannelWorkerDeps {
  run: RunJobs;
  idleTtlMs: number;
  /** GW_RECEIVER_BATCH_MS (0: one run per job). */
  batchMs: number;
  clock: Clock;
  log: Logger;
}

/** One set of workers: the channels' workers, and whether they are stopping. */
interface Pool {
  deps: ChannelWorkerDeps;
  workers: Map<string, Worker>;
  stopping: boolean;
}

/** The channel's worker (made when missing), its idle eviction called off. */
function workerOf(pool: Pool, channelId: string): Worker {
  let w = pool.workers.get(channelId);
  if (!w) {
    w = { queue: [], running: null, idle: null, window: null, fresh: false };
    pool.workers.set(channelId, w);
  }
  if (w.idle) clearTimeout(w.idle);
  w.idle = null;
  return w;
}

function evictLater(pool: Pool, channelId: string, w: Worker): void {
  // A worker holding a /new stays until a run takes it.
  if (!w.fresh && !w.idle && !pool.stopping)
    w.idle = setTimeout(() => pool.workers.delete(channelId), pool.deps.idleTtlMs);
}

/** Starts the channel's next run when nothing runs and planBatch says it may; else arms its window. */
function pump(pool: Pool, channelId: string, w: Worker): void {
  const { deps } = pool;
  if (w.running || w.window || pool.stopping) return;
  const now = deps.clock.now();
  const plan = planBatch(w.queue, now, deps.batchMs);
  if (!plan) {
    evictLater(pool, channelId, w);
    return;
  }
  if (plan.startAt > now) {
    w.window = setTimeout(() => {
      w.window = null;
      pump(pool, channelId, w);
    }, plan.startAt - now);
    return;
  }
  const run: Run = { jobs: w.queue.splice(0, plan.count), fresh: w.fresh };
  w.fresh = false;
  const abort = new AbortController();
  const done = deps
    .run(run, abort.signal)
    .catch((err) =>
      deps.log.error({ delivery_id: run.jobs[0]?.deliveryId, err: String(err) }, "agent run failed to start"),
    )
    .finally(() => {
      w.running = null;
      pump(pool, channelId, w);
    });
  w.running = { run, startedAt: now, done, abort };
}

const runningIn = (pool: Pool) => [...pool.workers.values()].flatMap((w) => (w.running ? [w.running] : []));

/** /stop of one channel: its waiting jobs dropped, its run aborted with STOP_REASON. */
function cancel(pool: Pool, channelId: string): { dropped: Job[]; stopped: Job[]; ended: Promise<void> } {
  const w = pool.workers.get(channelId);
  if (!w) return { dropped: [], stopped: [], ended: Promise.resolve() };
  if (w.window) clearTimeout(w.window);
  w.window = null;
  const dropped = w.queue.splice(0);
  const stopped = w.running ? [...w.running.run.jobs] : [];
  const ended = w.running?.done ?? Promise.resolve();
  w.running?.abort.abort(STOP_REASON);
  if (!w.running) evictLater(pool, channelId, w);
  return { dropped, stopped, ended };
}

/** Refuses new jobs, lets running ones finish within the grace, then aborts them; what never ran and what was stopped. */
async function stopPool(pool: Pool, graceMs: number): Promise<{ notRun: Job[]; stopped: Job[] }> {
  pool.stopping = true;
  const all = [...pool.workers.values()];
  for (const w of all) if (w.window) clearTimeout(w.window);
  const notRun = all.flatMap((w) => w.queue.splice(0));
  const done = Promise.all(runningIn(pool).map((r) => r.done));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const inTime = await Promise.race([
    done.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), graceMs);
    }),
  ]);
  clearTimeout(timer);
  const late = inTime ? [] : runningIn(pool);
  for (const r of late) r.abort.abort();
  await done;
  for (const w of pool.workers.values()) if (w.idle) clearTimeout(w.idle);
  pool.workers.clear();
  return { notRun, stopped: late.flatMap((r) => r.run.jobs) };
}

export function createChannelWorkers(deps: ChannelWorkerDeps) {
  const pool: Pool = { deps, workers: new Map(), stopping: false };
  const submitAll = (jobs: readonly Job[]): boolean => {
    if (pool.stopping) return false;
    const touched = new Map<string, Worker>();
    for (const job of jobs) {
      const channelId = job.envelope.channel_id;
      const w = touched.get(channelId) ?? workerOf(pool, channelId);
      touched.set(channelId, w);
      w.queue.push(job);
    }
    // Without a batch window a run starts right away, so it begins before the 204 is written (the 204
    // never waits for it).
    for (const [channelId, w] of touched) pump(pool, channelId, w);
    return true;
  };

  return {
    /** Queues a job behind its channel's earlier ones; false once stopping. */
    submit: (job: Job): boolean => submitAll([job]),
    /**
     * Queues jobs in order behind their channels' earlier ones, all before any run starts (so a batch taken
     * back from the journal is whole when its run begins); false once stopping.
     */
    submitAll,
    /** Jobs of the channel waiting behind its running one (or for their batch window). */
    waiting: (channelId: string): number => pool.workers.get(channelId)?.queue.length ?? 0,
    /** The delivery ids waiting in the channel, in order. */
    waitingIds: (channelId: string): string[] =>
      (pool.workers.get(channelId)?.queue ?? []).map((j) => j.deliveryId),
    /** What runs in the channel and how much waits (for /status and /stop). */
    state(channelId: string): ChannelState {
      const w = pool.workers.get(channelId);
      const r = w?.running;
      return {
        running: r ? { startedAt: r.startedAt, messages: r.run.jobs.length } : null,
        waiting: w?.queue.length ?? 0,
        fresh: w?.fresh ?? false,
      };
    },
    /** Makes the channel's next run start a new conversation (/new). */
    markFresh(channelId: string): void {
      if (!pool.stopping) workerOf(pool, channelId).fresh = true;
    },
    /**
     * /stop: drops the channel's waiting jobs and aborts its run (its process group is stopped as the time
     * budget stops it); returns both, and `ended`, which settles once that run has ended.
     */
    cancel: (channelId: string) => cancel(pool, channelId),
    stats() {
      let queued = 0;
      for (const w of pool.workers.values()) queued += w.queue.length;
      return { workers: pool.workers.size, running: runningIn(pool).length, queued };
    },
    stop: (graceMs: number) => stopPool(pool, graceMs),
  };
}

export type ChannelWorkers = ReturnType<typeof createChannelWorkers>;
