/**
 * A real state store (openStore on a real file) whose writes fail at a chosen instant, passed to
 * createService through its `openStore` port: `record` fails writing an outbound record (as SQLite does
 * when the database stays busy past its timeout), `complete` fails the Idempotency-Key's completion,
 * after the record was written in the same transaction (so the transaction rolls back both), `write`
 * fails every transaction (ingest's among them), as a disk that cannot take writes does.
 */
import { openStore, type Store } from "../../src/store/store.ts";

export type FaultPoint = "record" | "complete" | "write";

const busy = () => Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });

export function faultyStore() {
  const failing = new Set<FaultPoint>();
  let failures = 0;
  const check = (point: FaultPoint) => {
    if (!failing.has(point)) return;
    failures += 1;
    throw busy();
  };
  const open = (path: string): Store => {
    const real = openStore(path);
    return {
      ...real,
      transaction: (work) => {
        check("write");
        return real.transaction(work);
      },
      messages: {
        ...real.messages,
        insert: (row) => {
          check("record");
          real.messages.insert(row);
        },
        setReplyTo: (id, replyTo) => {
          check("record");
          real.messages.setReplyTo(id, replyTo);
        },
      },
      idempotency: {
        ...real.idempotency,
        settle: (scope, key, produce) =>
          real.idempotency.settle(scope, key, () => {
            const res = produce();
            if (key !== null) check("complete");
            return res;
          }),
      },
    };
  };
  return {
    open,
    fail: (point: FaultPoint) => void failing.add(point),
    heal: () => failing.clear(),
    /** How many writes were refused so far. */
    failures: () => failures,
  };
}
