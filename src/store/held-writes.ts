/**
 * Writes held for the end of a transaction: inside `scope` they are kept and made together (`flush`) when
 * the outermost scope's work returns, and dropped if the work that held them throws (so an inner
 * transaction that rolls back leaves none behind); outside any scope they are made at once. The search
 * index holds its FTS writes this way (a savepoint mid-transaction would flush FTS5 into a new segment),
 * the channel list its counts (one write per channel per transaction, not one per message).
 */
export function createHeldWrites<Op>(flush: (ops: Op[]) => void) {
  const held: Op[] = [];
  let depth = 0;
  return {
    write(op: Op): void {
      if (depth > 0) held.push(op);
      else flush([op]);
    },
    scope<T>(work: () => T): T {
      const mark = held.length;
      depth++;
      try {
        const result = work();
        if (depth === 1) flush(held.splice(0));
        return result;
      } catch (err) {
        held.length = mark;
        throw err;
      } finally {
        depth--;
      }
    },
  };
}
