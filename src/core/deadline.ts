/**
 * Deadlines for waits that must not hang (pure scheduling, no I/O): `withDeadline` settles with the
 * work's outcome, or with `late()` once `ms` passed, whichever is first; the work itself is left to
 * finish or fail on its own (a late rejection is swallowed, since nobody waits for it any more).
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
