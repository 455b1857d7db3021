/**
 * Long work in small steps, so the event loop is never held for long: a computation is a generator that
 * yields between units of work (each well under a millisecond) and returns its value. `drain` runs one to
 * its end at once (gw doctor, tests); `runSliced` runs it in slices of about `sliceMs`, pausing between
 * slices so timers, HTTP requests and long polls get their turn, and gives up (closing the generator, so
 * its `finally` blocks run) as soon as `cancelled()` says so. The generators hold no I/O of their own but
 * what their caller gave them; nothing here throws but what a step throws.
 */

/** A computation in steps: each `yield` is a point where it may be paused; the return is its value. */
export type Steps<T> = Generator<void, T, void>;

/** Runs the steps to their end without pausing. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

export interface SliceOptions {
  /** How long one slice may run before it pauses (checked at every step, so a slice ends within one step of it). */
  sliceMs: number;
  /** A monotonic clock in milliseconds. */
  now(): number;
  /** Lets the event loop run (a macrotask: timers and I/O first). */
  pause(): Promise<void>;
  /** True once the result is no longer wanted. */
  cancelled(): boolean;
  /** Filled in as the slices run. */
  stats?: SliceStats;
}

export interface SliceStats {
  slices: number;
  /** The longest slice, in ms to 0.1. */
  longestMs: number;
}

export class Cancelled extends Error {
  constructor() {
    super("cancelled");
  }
}

/** Runs the steps in slices of about `sliceMs`; rejects with Cancelled when cancelled between slices. */
export async function runSliced<T>(steps: Steps<T>, o: SliceOptions): Promise<T> {
  let from = o.now();
  const ended = () => {
    if (!o.stats) return;
    o.stats.slices++;
    o.stats.longestMs = Math.max(o.stats.longestMs, Math.round((o.now() - from) * 10) / 10);
  };
  try {
    for (;;) {
      const r = steps.next();
      if (r.done) {
        ended();
        return r.value;
      }
      if (o.now() - from < o.sliceMs) continue;
      ended();
      await o.pause();
      if (o.cancelled()) throw new Cancelled();
      from = o.now();
    }
  } finally {
    steps.return(undefined as never);
  }
}

/** A pause that lets timers and I/O run before the next slice. */
export const pauseForLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
