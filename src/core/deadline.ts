/**
 * Deadlines for waits that must not hang (scheduling only, no I/O): `withDeadline` settles with the
 * work's outcome, or with `late()` once `ms` passed, whichever is first; the work itself is left to
 * finish or fail on its own (a late rejection is swallowed, since nobody waits for it any more).
 * `pause` waits `ms`, or less when `signal` aborts (a stop never waits out a backoff).
 */
export function withDeadline<T, L>(work: Promise<T>, ms: number, late: () => L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<L>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (err) {
        reject(err);
      }
    }, ms);
  });
  work.catch(() => {});
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
