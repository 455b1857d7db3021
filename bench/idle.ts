/**
 * Benchmark: what gw costs while nothing happens, next to the peers and a bare Bun process in the same
 * run, where that time goes, and whether its file-change notifications still work afterwards.
 *
 *   bun run bench idle            (or: bun run bench/idle.ts; BENCH_IDLE_S=600 for the 10-minute check)
 *
 * Processes, side by side, each its own, all on one chat.db: a writer holding chat.db open
 * (bench/idle-writer.ts: WAL and shm exist, nothing is committed during the window); gw as
 * `bun src/main.ts serve` (the real command, default settings: notifications on, 1000 ms timer, no
 * webhooks); with BENCH_IDLE_WEBHOOKS=1 (default) a second `gw serve` with GW_WEBHOOK_URL to
 * bench/webhooks-sink.ts; with BENCH_IDLE_WHATIF=1 (default) two more `gw serve` that tell where gw's time
 * goes without changing src: one with GW_DEVICE_POLL_INTERVAL_MS=60000 (notifications on, the safety
 * timer out of the way) and one without the iMessage connector (GW_CHAT_DB_PATH unset); imessage-kit's
 * watcher (bench/pickup-kit.ts); the Claude Code iMessage plugin (bench/pickup-channel.ts claude starts it; its
 * server process is the one measured; skipped with a line when it cannot run); a bare Bun process of the
 * same runtime with nothing started (bench/idle-bare.ts). Each gw gets one GET /messages/unread before
 * the settle period, as a polling agent would have made.
 *
 * Everything is read from /proc, nothing is asked of the processes (lib/proc.ts): every thread's
 * schedstat every 500 ms from the start of the settle period (BENCH_IDLE_SETTLE_S), and stat, RSS and a
 * mark every BENCH_IDLE_SAMPLE_S. Over the window (BENCH_IDLE_S): CPU % of one core, summed over all
 * threads (threads that come and go included; utime + stime shown as a cross-check), per thread, per
 * interval; RSS at start, end, max and its least-squares slope. Then strace follows every gw and the
 * bare process for BENCH_IDLE_STRACE_S (0 skips; lib/strace.ts) for the event loop's wake-ups by source.
 * Last, the writer commits BENCH_IDLE_PICKUPS messages 300 ms apart and each watcher's pick-up is timed
 * (gw: GET /messages/unread polled every 1 ms by this script). Method and findings: bench/pickup-idle.md.
 * Prints tables, verdicts and the report JSON line. Environment: BENCH_IDLE_S (60), BENCH_IDLE_SETTLE_S
 * (30), BENCH_IDLE_SAMPLE_S (10), BENCH_IDLE_STRACE_S (20), BENCH_IDLE_PICKUPS (3), BENCH_IDLE_WEBHOOKS
 * (1), BENCH_IDLE_WHATIF (1), BENCH_KEEP (0), BENCH_CLAUDE_PLUGIN_GIT.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { spawnGw, stopGw, waitWhileRunning } from "../test/helpers/process.ts";
import { chatDbPathIn, GW_ALLOWLIST, gwEnvFor } from "./lib/chatdb.ts";
import { type Child, startChild } from "./lib/child.ts";
import { now } from "./lib/child-protocol.ts";
import { type ClaudePlugin, prepareClaudePlugin } from "./lib/claude-plugin.ts";
import { type MachineLoad, withMachineLoad } from "./lib/machine.ts";
import {
  type ProcSample,
  sampleProc,
  slope,
  ThreadLedger,
  type ThreadMark,
  threadSamples,
  type WindowCost,
  windowCost,
} from "./lib/proc.ts";
import { report, type SummaryRow } from "./lib/report.ts";
import { startSession } from "./lib/session.ts";
import { Sink } from "./lib/sink.ts";
import { intEnv } from "./lib/stats.ts";
import { hasStrace, type TraceSummary, traceFile, traceProcess } from "./lib/strace.ts";

const IDLE_S = intEnv("BENCH_IDLE_S", 60, 1);
const SETTLE_S = intEnv("BENCH_IDLE_SETTLE_S", 30, 0);
const SAMPLE_S = intEnv("BENCH_IDLE_SAMPLE_S", 10, 1);
/** How often every thread's schedstat is read, so threads that live a second or two are counted. */
const THREAD_SAMPLE_MS = 500;
const STRACE_S = intEnv("BENCH_IDLE_STRACE_S", 20, 0);
const PICKUPS = intEnv("BENCH_IDLE_PICKUPS", 3, 1);
const WEBHOOKS = intEnv("BENCH_IDLE_WEBHOOKS", 1, 0) === 1;
const WHATIF = intEnv("BENCH_IDLE_WHATIF", 1, 0) === 1;
const KEEP = intEnv("BENCH_KEEP", 0, 0) === 1;
const TARGET = { cpuPct: 0.15, rssGrowthKiB: 1024, pickupMs: 50 };

const HERE = import.meta.dir;
const PATH = process.env.PATH ?? "/usr/bin:/bin";
const progress = (s: string) => process.stderr.write(`[idle] ${s}\n`);
const startedAt = performance.now();
const TOKEN = `bench-${crypto.randomUUID()}`;
const SECRET = `whsec-${crypto.randomUUID()}`;

const session = startSession(progress, KEEP);
const dir = session.tempDir("gw-bench-idle-");
const chatDbPath = chatDbPathIn(dir);
writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);

// ---------------------------------------------------------------------------------------------------
// The processes

interface Measured {
  name: string;
  role: "gw" | "whatif" | "peer" | "floor";
  pid: number;
  /** How its pick-up of a new message is observed: returns the sighting instant, on our clock, or null. */
  pickUp?: (text: string, deadline: number) => Promise<number | null>;
  stop(): Promise<void>;
}

/** A peer's or the writer's process, ready and calibrated. */
const startReady = async (name: string, args: string[], env: Record<string, string>): Promise<Child> =>
  (await startChild(name, args, env)).child;

/** `gw serve` from source, listening on a free port (read from its log line). */
async function startGwServe(
  name: string,
  sub: string,
  extra: Record<string, string>,
  opts: { role?: "gw" | "whatif"; iMessage?: boolean } = {},
): Promise<Measured> {
  const home = join(dir, sub);
  mkdirSync(home, { recursive: true });
  const env: Record<string, string> = {
    ...gwEnvFor(home, chatDbPath, TOKEN),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
    ...extra,
  };
  // Off macOS the iMessage connector runs only when GW_CHAT_DB_PATH is set.
  if (opts.iMessage === false) delete env.GW_CHAT_DB_PATH;
  const gw = spawnGw(["serve"], env);
  session.track(gw.proc);
  const port = Number(
    await waitWhileRunning(
      gw,
      () => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(gw.output().stderr)?.[1],
      `${name}'s "listening" line`,
      60_000,
    ),
  );
  const headers = { authorization: `Bearer ${TOKEN}`, "x-agent-id": "bench-idle" };
  // One request before the settle period, as an agent that polls would have made: the route's first
  // call (handler and validator compilation, the first connection) is not part of a later pick-up.
  await (await fetch(`http://127.0.0.1:${port}/messages/unread?limit=100`, { headers })).json();
  /** Polls GET /messages/unread every 1 ms until the message is listed; marks what it lists read. */
  const pickUp = async (text: string, deadline: number): Promise<number | null> => {
    while (now() < deadline) {
      const res = await fetch(`http://127.0.0.1:${port}/messages/unread?limit=100`, { headers });
      const t = now();
      const body = (await res.json()) as { messages: { id: string; text: string }[] };
      if (body.messages.some((m) => m.text === text)) {
        await fetch(`http://127.0.0.1:${port}/messages/mark_read`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ message_ids: body.messages.map((m) => m.id) }),
        });
        return t;
      }
      await Bun.sleep(1);
    }
    return null;
  };
  return {
    name,
    role: opts.role ?? "gw",
    pid: gw.proc.pid,
    ...(opts.iMessage === false ? {} : { pickUp }),
    stop: async () => void (await stopGw(gw)),
  };
}

/** A child that reports `{"seen":text,"t"}`: its sighting, on our clock. */
const seenBy = (child: Child) => async (text: string, deadline: number) => {
  const m = await child
    .waitFor((x) => x.seen === text, Math.max(1, deadline - now()), text)
    .catch(() => null);
  return m ? (m.t as number) - child.offsetMs : null;
};

// ---------------------------------------------------------------------------------------------------
// Run

interface ProcResult {
  name: string;
  role: Measured["role"];
  pid: number;
  /** CPU % of one core per SAMPLE_S interval from the start of the settle period (ns, all threads). */
  cpuPctSeries: number[];
  /** Index in cpuPctSeries where the window starts. */
  windowStartsAt: number;
  window: WindowCost;
  rss: {
    startMiB: number;
    endMiB: number;
    maxMiB: number;
    growthKiB: number;
    slopeKiBPerMin: number;
    samplesMiB: number[];
  };
  hwmMiB: number;
}

const mib = (kib: number) => Math.round((kib / 1024) * 100) / 100;
const measured: Measured[] = [];
const skipped: Record<string, string> = {};
let writer: Child | null = null;
let sink: Sink | null = null;
const results: Record<string, unknown> = {};
let procs: ProcResult[] = [];
const traces: Record<string, TraceSummary | string> = {};
const pickups: Record<string, (number | null)[]> = {};
let machine: MachineLoad | null = null;

progress(`work dir ${dir}`);
const load1 = loadavg()[0] ?? 0;
if (load1 > 0.5)
  progress(`warning: 1-min load average is ${load1.toFixed(2)}: other work shares these cores`);
try {
  writer = await startReady("writer", [join(HERE, "idle-writer.ts")], { PATH, BENCH_CHAT_DB: chatDbPath });
  measured.push(await startGwServe("gw serve", "gw", {}));
  if (WEBHOOKS) {
    sink = await Sink.start(SECRET);
    measured.push(
      await startGwServe("gw serve (webhooks on)", "gw-webhooks", {
        GW_WEBHOOK_URL: sink.url,
        GW_WEBHOOK_SECRET: SECRET,
      }),
    );
  }
  if (WHATIF) {
    measured.push(
      await startGwServe(
        "gw serve, iMessage timer 60 s (what-if)",
        "gw-timer60",
        { GW_DEVICE_POLL_INTERVAL_MS: "60000" },
        { role: "whatif" },
      ),
      await startGwServe(
        "gw serve, no iMessage connector (what-if)",
        "gw-nodevice",
        {},
        {
          role: "whatif",
          iMessage: false,
        },
      ),
    );
  }
  const kit = await startReady("imessage-kit", [join(HERE, "pickup-kit.ts")], {
    PATH,
    HOME: dir,
    BENCH_CHAT_DB: chatDbPath,
  });
  measured.push({
    name: "imessage-kit 3.0.0",
    role: "peer",
    pid: kit.proc.pid,
    pickUp: seenBy(kit),
    stop: () => kit.stop(),
  });
  const plugin: ClaudePlugin | { skip: string } = prepareClaudePlugin();
  if ("skip" in plugin) skipped["Claude Code iMessage plugin"] = plugin.skip;
  else {
    session.own(plugin.dir);
    try {
      const claude = await startReady("claude-plugin", [join(HERE, "pickup-channel.ts"), "claude"], {
        PATH,
        HOME: dir,
        BENCH_CHAT_DB: chatDbPath,
        BENCH_CLAUDE_SERVER: plugin.server,
        BENCH_CLAUDE_STATE: plugin.stateDir,
      });
      const ready = claude.msgs.find((m) => "ready" in m);
      measured.push({
        name: "Claude Code iMessage plugin (server)",
        role: "peer",
        pid: Number(ready?.pluginPid),
        pickUp: seenBy(claude),
        stop: () => claude.stop(),
      });
    } catch (err) {
      skipped["Claude Code iMessage plugin"] = String(err).split("\n")[0] ?? String(err);
    }
  }
  const bare = Bun.spawn([process.execPath, join(HERE, "idle-bare.ts")], {
    env: { PATH },
    stdin: "pipe",
    stdout: "ignore",
    stderr: "inherit",
  });
  session.track(bare);
  measured.push({
    name: "bare Bun process",
    role: "floor",
    pid: bare.pid,
    async stop() {
      bare.stdin.end();
      await bare.exited;
    },
  });
  for (const [name, why] of Object.entries(skipped)) progress(`SKIPPED ${name}: ${why}`);

  // Settle, then the window. Every thread of every process is read every THREAD_SAMPLE_MS from the
  // start of the settle period; a full sample (stat, RSS, a ledger mark) every SAMPLE_S.
  const first = measured.map((m) => sampleProc(m.pid));
  const ledgers = measured.map((m, i) => new ThreadLedger(m.pid, first[i]?.threads ?? []));
  const full: { sample: ProcSample; mark: ThreadMark }[][] = [
    first.map((sample, i) => ({ sample, mark: (ledgers[i] as ThreadLedger).mark() })),
  ];
  const takeFull = () =>
    full.push(
      measured.map((m, i) => {
        const sample = sampleProc(m.pid);
        const ledger = ledgers[i] as ThreadLedger;
        ledger.observe(sample.threads);
        return { sample, mark: ledger.mark() };
      }),
    );
  /** Samples until `ms` from now: threads every THREAD_SAMPLE_MS, a full sample every SAMPLE_S and at the end. */
  const watch = async (ms: number) => {
    const t0 = performance.now();
    const end = t0 + ms;
    let nextFull = t0 + SAMPLE_S * 1000;
    for (;;) {
      const left = end - performance.now();
      if (left > 0) await Bun.sleep(Math.min(THREAD_SAMPLE_MS, left));
      const at = performance.now();
      if (at >= end) {
        takeFull();
        return;
      }
      if (at >= nextFull) {
        nextFull += SAMPLE_S * 1000;
        takeFull();
      } else {
        for (const [i, m] of measured.entries()) ledgers[i]?.observe(threadSamples(m.pid));
      }
    }
  };
  progress(
    `settling ${SETTLE_S} s, then ${IDLE_S} s idle: ${measured.map((m) => `${m.name} (${m.pid})`).join(", ")}`,
  );
  await watch(SETTLE_S * 1000);
  const w0 = full.length - 1;
  const [, load] = await withMachineLoad(() => watch(IDLE_S * 1000));
  machine = load;
  progress(`window done`);
  procs = measured.map((m, i) => {
    const at = (k: number) =>
      (full[k] as { sample: ProcSample; mark: ThreadMark }[])[i] as {
        sample: ProcSample;
        mark: ThreadMark;
      };
    const ledger = ledgers[i] as ThreadLedger;
    const series = full.slice(w0).map((_, k) => at(w0 + k).sample);
    const a = at(w0);
    const b = at(full.length - 1);
    const pts = series.map((x) => [(x.at - a.sample.at) / 60_000, x.rssKiB] as const);
    // CPU % of one core per SAMPLE_S interval from the start of the settle period, from the marks.
    const cpuSeries = full.slice(1).map((_, k) => {
      const x = at(k);
      const y = at(k + 1);
      const ms =
        [...y.mark].reduce((sum, [tid, t]) => sum + t.cpuNs - (x.mark.get(tid)?.cpuNs ?? 0), 0) / 1e6;
      return Math.round((ms / (y.sample.at - x.sample.at)) * 100_000) / 1000;
    });
    return {
      name: m.name,
      role: m.role,
      pid: m.pid,
      cpuPctSeries: cpuSeries,
      windowStartsAt: w0,
      window: windowCost(a.sample, b.sample, ledger, a.mark),
      rss: {
        startMiB: mib(a.sample.rssKiB),
        endMiB: mib(b.sample.rssKiB),
        maxMiB: mib(Math.max(...series.map((x) => x.rssKiB))),
        growthKiB: b.sample.rssKiB - a.sample.rssKiB,
        slopeKiBPerMin: Math.round(slope(pts) * 10) / 10,
        samplesMiB: series.map((x) => mib(x.rssKiB)),
      },
      hwmMiB: mib(b.sample.hwmKiB),
    };
  });

  // Where the time goes: strace on each gw and on the bare process, at once.
  if (STRACE_S > 0 && hasStrace()) {
    progress(`strace on gw and the bare process for ${STRACE_S} s`);
    const targets = measured.filter((m) => m.role !== "peer");
    const out = await Promise.allSettled(
      targets.map((m, i) =>
        traceProcess(m.pid, STRACE_S, traceFile(dir, String(i)), (p: Subprocess) => session.track(p)),
      ),
    );
    out.forEach((o, i) => {
      const name = targets[i]?.name ?? String(i);
      traces[name] = o.status === "fulfilled" ? o.value : `strace failed: ${String(o.reason).split("\n")[0]}`;
    });
  } else if (STRACE_S > 0) traces.all = "strace is not installed: no syscall breakdown";

  // Notifications still work: commit, time each watcher's pick-up.
  progress(`pick-up after the idle window: ${PICKUPS} commits`);
  for (let i = 0; i < PICKUPS; i++) {
    await Bun.sleep(300);
    const text = `idle pick-up ${crypto.randomUUID().slice(0, 8)} #${i}`;
    const r = await (writer as Child).request({ cmd: "commit", text });
    const tCommit = (r.tCommit as number) - (writer as Child).offsetMs;
    const deadline = tCommit + 5000;
    const seen = await Promise.all(measured.map((m) => (m.pickUp ? m.pickUp(text, deadline) : null)));
    measured.forEach((m, j) => {
      if (!m.pickUp) return;
      const t = seen[j];
      const list = pickups[m.name] ?? [];
      pickups[m.name] = list;
      list.push(t === null || t === undefined ? null : Math.round((t - tCommit) * 100) / 100);
    });
  }
} finally {
  for (const m of measured) await m.stop().catch(() => undefined);
  await sink?.stop().catch(() => undefined);
  await writer?.stop().catch(() => undefined);
  session.cleanup();
}

// ---------------------------------------------------------------------------------------------------
// Report

const lines: string[] = [];
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : "n/a");
lines.push(
  "",
  `idle ${IDLE_S} s after ${SETTLE_S} s settle; machine busy ${machine?.busyPctAllCores ?? "n/a"} % of all cores (load ${machine?.load1Start} → ${machine?.load1End})`,
  `  ${"process".padEnd(38)}${["cpu ms", "cpu %", "stat %", "RSS start", "end", "max", "KiB/min"].map((h) => h.padStart(11)).join("")}`,
);
for (const p of procs) {
  lines.push(
    `  ${p.name.padEnd(38)}${[
      p.window.cpuMs,
      f3(p.window.cpuPct),
      f3(p.window.statCpuPct),
      p.rss.startMiB,
      p.rss.endMiB,
      p.rss.maxMiB,
      p.rss.slopeKiBPerMin,
    ]
      .map((x) => String(x).padStart(11))
      .join("")}`,
  );
}
for (const p of procs.filter((x) => x.role !== "peer")) {
  lines.push(
    "",
    `${p.name}: CPU and runs on a CPU per second, by thread, over the window`,
    ...p.window.byThread.map(
      (t) =>
        `  ${`${t.name} (${t.threads})`.padEnd(28)} ${String(t.cpuMs).padStart(9)} ms ${String(t.runsPerS).padStart(7)}/s`,
    ),
    `  CPU % per ${SAMPLE_S} s from its start (settle | window): ${p.cpuPctSeries.slice(0, p.windowStartsAt).join(" ")} | ${p.cpuPctSeries.slice(p.windowStartsAt).join(" ")}`,
  );
  const tr = traces[p.name];
  if (typeof tr === "string") lines.push(`  ${tr}`);
  else if (tr) {
    lines.push(
      `  strace ${Math.round(tr.seconds)} s: event-loop wake-ups/s: timer ${tr.loopWakeupsPerS.timer}, I/O ${tr.loopWakeupsPerS.io}`,
      ...Object.entries(tr.sourcesPerS).map(([k, v]) => `    ${k}: ${v}/s`),
      `    threads created: ${tr.threadsCreated.length} (${[...new Set(tr.threadsCreated)].join(", ") || "none"})`,
    );
  }
}
lines.push("", "pick-up after the window (ms from commit, per commit)");
for (const [name, v] of Object.entries(pickups))
  lines.push(`  ${name.padEnd(38)} ${v.map((x) => x ?? "none").join(", ")}`);
for (const [name, why] of Object.entries(skipped)) lines.push(`SKIPPED ${name}: ${why}`);

const byName = new Map(procs.map((p) => [p.name, p]));
const gw = byName.get("gw serve");
const gwHooks = byName.get("gw serve (webhooks on)");
const bareP = byName.get("bare Bun process");
const peers = procs.filter((p) => p.role === "peer");
const cpuBase = [bareP, ...peers]
  .filter((p): p is ProcResult => p !== undefined)
  .map((p) => `${p.name} ${f3(p.window.cpuPct)} %`)
  .join("; ");
const rssBase = [bareP, ...peers]
  .filter((p): p is ProcResult => p !== undefined)
  .map((p) => `${p.name} ${p.rss.startMiB} → ${p.rss.endMiB} MiB (${p.rss.slopeKiBPerMin} KiB/min)`)
  .join("; ");
const whatIfs = procs.filter((p) => p.role === "whatif");
const whatIfBase = whatIfs.map((p) => `${p.name} ${f3(p.window.cpuPct)} %`).join("; ");
const summary: SummaryRow[] = [];
for (const p of [gw, gwHooks]) {
  if (!p) continue;
  summary.push({
    figure: `${p.name}, idle ${IDLE_S} s: CPU % of one core (all threads, schedstat; ratio ÷ bare Bun)`,
    value: `${f3(p.window.cpuPct)} % (${p.window.cpuMs} ms; utime+stime ${f3(p.window.statCpuPct)} %)`,
    baseline: [cpuBase, whatIfBase].filter(Boolean).join("; "),
    ratio:
      bareP && bareP.window.cpuPct > 0 ? Math.round((p.window.cpuPct / bareP.window.cpuPct) * 10) / 10 : null,
    target: `≤ ${TARGET.cpuPct} % of a core`,
    pass: p.window.cpuPct <= TARGET.cpuPct,
  });
  const growth = Math.max(p.rss.growthKiB, (p.rss.slopeKiBPerMin * IDLE_S) / 60);
  summary.push({
    figure: `${p.name}, idle ${IDLE_S} s: RSS start → end (max; least-squares slope)`,
    value: `${p.rss.startMiB} → ${p.rss.endMiB} MiB (max ${p.rss.maxMiB}; ${p.rss.slopeKiBPerMin} KiB/min)`,
    baseline: rssBase,
    ratio: null,
    target: `flat: end − start and slope × window ≤ ${TARGET.rssGrowthKiB} KiB`,
    pass: growth <= TARGET.rssGrowthKiB,
  });
}
for (const [name, v] of Object.entries(pickups)) {
  const p = byName.get(name);
  const got = v.filter((x): x is number => x !== null);
  const max = got.length > 0 ? Math.max(...got) : Number.NaN;
  summary.push({
    figure: `after ${IDLE_S} s idle: ${name} picks up a new message (max of ${PICKUPS} commits)`,
    value: `${got.length === v.length ? `${Math.round(max * 10) / 10} ms` : `${v.length - got.length} of ${v.length} missed`} (${v.map((x) => x ?? "none").join(", ")})`,
    baseline: "",
    ratio: null,
    target: p?.role === "gw" ? `all picked up, ≤ ${TARGET.pickupMs} ms (notifications working)` : "",
    pass: p?.role === "gw" ? got.length === v.length && max <= TARGET.pickupMs : null,
  });
}
for (const p of [...whatIfs, ...peers, bareP]) {
  if (!p) continue;
  summary.push({
    figure: `${p.name}, idle ${IDLE_S} s: CPU % of one core; RSS`,
    value: `${f3(p.window.cpuPct)} %; ${p.rss.startMiB} → ${p.rss.endMiB} MiB (${p.rss.slopeKiBPerMin} KiB/min)`,
    baseline: "",
    ratio: null,
    target: "",
    pass: null,
  });
}
if (skipped["Claude Code iMessage plugin"])
  summary.push({
    figure: "Claude Code iMessage plugin",
    value: `skipped: ${skipped["Claude Code iMessage plugin"]}`,
    baseline: "",
    ratio: null,
    target: "",
    pass: null,
  });
for (const p of [gw, gwHooks]) {
  const tr = p ? traces[p.name] : undefined;
  if (!p || !tr || typeof tr === "string") continue;
  const main = p.window.byThread.find((t) => t.name === "main (event loop)");
  summary.push({
    figure: `${p.name}: where idle time goes (strace ${Math.round(tr.seconds)} s + schedstat)`,
    value: `event loop ${tr.loopWakeupsPerS.timer} timer + ${tr.loopWakeupsPerS.io} I/O wake-ups/s, ${main ? `${main.cpuMs} ms` : "?"} on the main thread; ${Object.entries(
      tr.sourcesPerS,
    )
      .slice(0, 4)
      .map(([k, v]) => `${k} ${v}/s`)
      .join("; ")}`,
    baseline: bareP ? `bare: ${bareP.window.byThread.map((t) => `${t.name} ${t.cpuMs} ms`).join(", ")}` : "",
    ratio: null,
    target: "",
    pass: null,
  });
}

results.config = {
  idleS: IDLE_S,
  settleS: SETTLE_S,
  sampleS: SAMPLE_S,
  straceS: STRACE_S,
  pickups: PICKUPS,
  webhooks: WEBHOOKS,
};
results.processes = procs;
results.traces = traces;
results.pickupsMs = pickups;
results.machineLoad = machine;
results.skipped = skipped;
report({
  bench: "idle",
  command: IDLE_S === 60 ? "bun run bench idle" : `BENCH_IDLE_S=${IDLE_S} bun run bench idle`,
  startedAt,
  lines,
  summary,
  results,
});
