/**
 * Child process of idle.ts and events.ts: the floor, a Bun process of the same runtime with nothing started.
 * It only waits for stdin to close (which is also how it ends with its parent).
 */
for await (const _ of Bun.stdin.stream()) {
  // nothing: input is ignored
}

export {};
