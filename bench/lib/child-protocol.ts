/**
 * Shared by the benchmarks' child processes: the time base and the line protocol. A child writes one JSON object per line on stdout and reads one JSON command per line
 * on stdin: `{"cmd":"ping","id":n}` answers `{"id":n,"t":<now>}` (clock calibration), `{"cmd":"stats"}`
 * answers the process's CPU time and memory, `{"cmd":"stop"}` runs the child's stop hook and exits.
 * Reading stdin is also what keeps an otherwise idle child alive.
 */

/**
 * Wall-clock milliseconds with sub-millisecond resolution: this process's timeOrigin (realtime clock
 * at start) plus the monotonic performance.now(). Comparable across processes of one machine; the
 * parent measures the residual offset of every child with pings and corrects for it.
 */
export const now = (): number => performance.timeOrigin + performance.now();

export function emit(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

export interface ProcessStats {
  /** Process CPU time, user and system, in microseconds (getrusage). */
  cpuUserUs: number;
  cpuSystemUs: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** This process's monotonic clock, ms, for the wall time between two samples. */
  monoMs: number;
}

export function processStats(): ProcessStats {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  return {
    cpuUserUs: cpu.user,
    cpuSystemUs: cpu.system,
    rssBytes: mem.rss,
    heapUsedBytes: mem.heapUsed,
    monoMs: performance.now(),
  };
}

export type Command = { cmd: string; id?: number; [k: string]: unknown };

/** Answers ping/stats/stop on stdin; other commands go to `other`. Resolves when stdin closes. */
export async function serveCommands(
  onStop: () => Promise<void> | void,
  other: (c: Command) => Promise<Record<string, unknown>> | Record<string, unknown> = () => ({
    error: "unknown command",
  }),
): Promise<void> {
  for await (const line of console) {
    if (line.trim() === "") continue;
    const c = JSON.parse(line) as Command;
    if (c.cmd === "ping") emit({ id: c.id, t: now() });
    else if (c.cmd === "stats") emit({ id: c.id, stats: processStats() });
    else if (c.cmd === "stop") {
      await onStop();
      emit({ id: c.id, stopped: true });
      process.exit(0);
    } else emit({ id: c.id, ...(await other(c)) });
  }
  await onStop();
}

/**
 * A bare baseline's HTTP server: `Bun.serve` on 127.0.0.1:`port` answering GET `path` with `answer`
 * and 404 to anything else; no framework, no auth.
 */
export function serveGet(port: number, path: string, answer: (url: URL, req: Request) => Response) {
  return Bun.serve({
    hostname: "127.0.0.1",
    port,
    reusePort: false,
    fetch(req) {
      const url = new URL(req.url);
      if (req.method !== "GET" || url.pathname !== path) return new Response("not found", { status: 404 });
      return answer(url, req);
    },
  });
}

/**
 * A server child's argv (lib/http-server.ts starts it): `<mode> <work dir> <port>`, the mode one of
 * `modes`; anything else prints the usage of `script` and exits 2.
 */
export function serverArgs<M extends string>(script: string, modes: readonly M[]) {
  const [mode, dir, port] = process.argv.slice(2);
  if (!modes.includes(mode as M) || !dir || !port) {
    process.stderr.write(`usage: bun run ${script} <${modes.join("|")}> <work dir> <port>\n`);
    process.exit(2);
  }
  return { mode: mode as M, dir, port: Number(port) };
}

/**
 * A benchmark's server child: prints `ready <port>` (what lib/http-server.ts waits for) and, on the
 * first SIGTERM or SIGINT, runs `stop` once and exits (1 if it failed).
 */
export function readyUntilSignal(port: number, stop: () => Promise<void> | void): void {
  let stopping = false;
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    Promise.resolve()
      .then(stop)
      .then(
        () => process.exit(0),
        (err) => {
          process.stderr.write(`stop failed: ${(err as Error).message}\n`);
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  process.stdout.write(`ready ${port}\n`);
}
