/**
 * Where an idle process's wake-ups come from, from a `strace -f -tt -y -qq` trace of it: system calls
 * per second per thread (named from /proc and from the PR_SET_NAME calls in the trace, so short-lived
 * threads are named too), the event-loop thread's returns from epoll (timer expiry vs. ready I/O), and a
 * few sources recognised by their arguments (a stat of chat.db, a read transaction's lock on chat.db-shm,
 * an inotify read, a thread created). `traceProcess` runs strace for a while (Linux, strace installed);
 * `parseTrace` is pure.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { r2 } from "./stats.ts";

export interface TraceSummary {
  seconds: number;
  /** Returns of epoll waits on the event-loop (main) thread, per second: 0 events = a timer, else I/O. */
  loopWakeupsPerS: { timer: number; io: number };
  /** Recognised sources, per second. */
  sourcesPerS: Record<string, number>;
  /** Calls per second by thread name and system call (calls ≥ 0.05/s). */
  syscallsPerS: Record<string, Record<string, number>>;
  threadsCreated: string[];
}

const LINE = /^(\d+)\s+\d\d:\d\d:\d\d\.\d+\s+(.*)$/;

interface Call {
  tid: number;
  name: string;
  /** The call as printed: arguments, then the result after " = ". */
  text: string;
  result: number;
}

/** Joins each `<unfinished ...>` line with its `<... resumed>` line; calls cut by the trace's ends are dropped. */
function calls(text: string, names: Map<number, string>): Call[] {
  const out: Call[] = [];
  const pending = new Map<number, string>();
  for (const line of text.split("\n")) {
    const m = LINE.exec(line);
    if (!m) continue;
    const tid = Number(m[1]);
    let rest = m[2] as string;
    const named = /prctl\(PR_SET_NAME, "([^"]*)"/.exec(rest);
    if (named) names.set(tid, named[1] as string);
    if (rest.endsWith("<unfinished ...>")) {
      pending.set(tid, rest.slice(0, -"<unfinished ...>".length));
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    if (resumed) {
      const start = pending.get(tid);
      pending.delete(tid);
      if (start === undefined || !start.startsWith(`${resumed[1]}(`)) continue;
      rest = start + (resumed[2] as string);
    }
    const call = /^(\w+)\(/.exec(rest);
    const result = /\) = (-?\d+)(?: \w+ \([^)]*\))?(?: <[^>]*>)?$/.exec(rest) ?? / = (-?\d+)/.exec(rest);
    if (!call || !result) continue;
    out.push({ tid, name: call[1] as string, text: rest, result: Number(result[1]) });
  }
  return out;
}

/** Pure: summarises a trace of process `pid` that lasted `seconds`; `names` maps tids to thread names. */
export function parseTrace(
  text: string,
  pid: number,
  seconds: number,
  names: Map<number, string>,
): TraceSummary {
  const list = calls(text, names);
  const counts = new Map<string, number>();
  const sources: Record<string, number> = {};
  const created: number[] = [];
  let timer = 0;
  let io = 0;
  const add = (k: string) => {
    sources[k] = (sources[k] ?? 0) + 1;
  };
  const nameOf = (tid: number) => (tid === pid ? "main (event loop)" : (names.get(tid) ?? `thread ${tid}`));
  for (const c of list) {
    const key = `${nameOf(c.tid)}\u0000${c.name}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (c.tid === pid && /^epoll_p?wait2?$/.test(c.name)) {
      if (c.result === 0) timer += 1;
      else if (c.result > 0) io += 1;
    } else if (c.name === "statx" || c.name === "newfstatat" || c.name === "stat") {
      if (/chat\.db"/.test(c.text)) add("stat of chat.db (device poll tick: file identity)");
    } else if (c.name === "fcntl" && /chat\.db-shm>.*F_RDLCK/.test(c.text))
      add("chat.db read transaction (shm read lock)");
    else if (c.name === "read" && /<anon_inode:inotify>/.test(c.text) && c.result > 0)
      add("inotify event read (fs.watch)");
    else if (c.name === "clone3" || c.name === "clone") {
      add("thread created");
      created.push(c.result);
    } else if (c.name === "openat") {
      const path = /openat\([^,]*, "([^"]*)"/.exec(c.text)?.[1] ?? "?";
      add(`openat ${path}`);
    } else if (c.name === "write" || c.name === "writev") {
      const fd = /^\w+\(\d+<([^>]*)>/.exec(c.text)?.[1] ?? "?";
      add(`write to ${fd.replace(/.*\//, "…/")}`);
    } else if (c.name === "madvise") add("madvise (allocator returning memory)");
  }
  const perThread: Record<string, Record<string, number>> = {};
  for (const [key, n] of counts) {
    const [thread, call] = key.split("\u0000") as [string, string];
    const perS = r2(n / seconds);
    if (perS < 0.05) continue;
    perThread[thread] ??= {};
    (perThread[thread] as Record<string, number>)[call] = perS;
  }
  return {
    seconds,
    loopWakeupsPerS: { timer: r2(timer / seconds), io: r2(io / seconds) },
    sourcesPerS: Object.fromEntries(
      Object.entries(sources)
        .map(([k, n]) => [k, r2(n / seconds)] as [string, number])
        .sort((a, b) => b[1] - a[1]),
    ),
    syscallsPerS: perThread,
    threadsCreated: created.map((t) => names.get(t) ?? `thread ${t}`),
  };
}

export function threadNames(pid: number): Map<number, string> {
  const names = new Map<number, string>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        names.set(Number(tid), readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim());
      } catch {}
    }
  } catch {}
  return names;
}

export function hasStrace(): boolean {
  try {
    return Bun.spawnSync(["strace", "-V"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  } catch {
    return false;
  }
}

/**
 * Attaches strace to `pid` (all threads) for `seconds`, then detaches (SIGINT) and parses the trace.
 * `track` receives the strace process so the caller's cleanup can stop it.
 */
export async function traceProcess(
  pid: number,
  seconds: number,
  outFile: string,
  track: (p: Subprocess) => void,
): Promise<TraceSummary> {
  const names = threadNames(pid);
  const proc = Bun.spawn(["strace", "-f", "-tt", "-y", "-qq", "-o", outFile, "-p", String(pid)], {
    stdout: "ignore",
    stderr: "pipe",
  });
  track(proc);
  const t0 = performance.now();
  await Bun.sleep(seconds * 1000);
  for (const [tid, name] of threadNames(pid)) names.set(tid, name);
  proc.kill("SIGINT");
  const code = await proc.exited;
  const wall = (performance.now() - t0) / 1000;
  const text = readFileSync(outFile, "utf8");
  if (text.trim() === "" && code !== 0)
    throw new Error(`strace exited ${code}: ${await new Response(proc.stderr).text()}`);
  return parseTrace(text, pid, wall, names);
}

export const traceFile = (dir: string, name: string) => join(dir, `strace-${name}.txt`);
