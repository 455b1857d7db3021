import { expect, test } from "bun:test";
import { createKeyedQueue } from "../../src/core/keyed-queue.ts";

const deferred = () => {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

test("tasks of one key run one at a time in push order; other keys are not held up", async () => {
  const q = createKeyedQueue();
  const log: string[] = [];
  const gate = deferred();
  const a1 = q.push("a", async () => {
    log.push("a1 start");
    await gate.promise;
    log.push("a1 end");
  });
  const a2 = q.push("a", async () => void log.push("a2"));
  await q.push("b", async () => void log.push("b1"));
  expect(log).toEqual(["a1 start", "b1"]);
  gate.resolve();
  await Promise.all([a1, a2]);
  expect(log).toEqual(["a1 start", "b1", "a1 end", "a2"]);
});

test("a failing task rejects for its caller and the next one still runs", async () => {
  const q = createKeyedQueue();
  const failed = q.push("a", async () => {
    throw new Error("boom");
  });
  const next = q.push("a", async () => 42);
  await expect(failed).rejects.toThrow("boom");
  expect(await next).toBe(42);
});

test("idle waits for work pushed while it waits", async () => {
  const q = createKeyedQueue();
  const done: number[] = [];
  void q.push("a", async () => {
    await Bun.sleep(5);
    void q.push("b", async () => void done.push(2));
    done.push(1);
  });
  await q.idle();
  expect(done).toEqual([1, 2]);
});
