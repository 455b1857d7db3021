/**
 * Which of a channel's waiting jobs the next run takes, and when it may start (pure; GW_RECEIVER_BATCH_MS,
 * extensions §7). The queue is in arrival order. A run takes the oldest waiting job and every later one
 * that arrived within `windowMs` of it, and starts when that window has closed; jobs that arrive while a run
 * runs wait, and are taken by the same rule when it ends. A window of 0 is the spec's one run per job, at
 * once. A batch taken back from the journal (its jobs carry the same `batch`) runs again whole, at once.
 */

export interface Waiting {
  receivedAt: number;
  /** Set on the jobs of a batch that had started before a stop or crash. */
  batch?: string;
}

export interface BatchPlan {
  /** How many jobs from the head of the queue the run takes. */
  count: number;
  /** When it may start (epoch ms); `now` or later. */
  startAt: number;
}

export function planBatch(queue: readonly Waiting[], now: number, windowMs: number): BatchPlan | null {
  const oldest = queue[0];
  if (!oldest) return null;
  if (oldest.batch !== undefined) {
    const size = queue.findIndex((j) => j.batch !== oldest.batch);
    return { count: size === -1 ? queue.length : size, startAt: now };
  }
  if (windowMs <= 0) return { count: 1, startAt: now };
  const closes = oldest.receivedAt + windowMs;
  const size = queue.findIndex((j) => j.batch !== undefined || j.receivedAt > closes);
  return { count: size === -1 ? queue.length : size, startAt: Math.max(now, closes) };
}
