/**
 * Serial work per key: tasks pushed under one key run one at a time in push order; different keys run
 * in parallel. A failing task does not stop the ones after it (its caller sees the rejection). Keys
 * with nothing queued hold no memory.
 */
export function createKeyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    push<T>(key: string, task: () => Promise<T>): Promise<T> {
      const run = (tails.get(key) ?? Promise.resolve()).then(task);
      const tail = run.catch(() => {});
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return run;
    },
    /** Settles when everything queued so far has finished. */
    idle: async (): Promise<void> => {
      while (tails.size > 0) await Promise.all(tails.values());
    },
  };
}

export type KeyedQueue = ReturnType<typeof createKeyedQueue>;
