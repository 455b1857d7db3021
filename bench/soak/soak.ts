/**
 * Benchmark: memory stays bounded (issue 19 item 6). One `gw serve` process (the real command, in a
 * process of its own, so /proc/<pid>/status VmRSS is gw's alone) takes 500,000 Discord messages over
 * 2,000 channels and 500,000 chat.db rows with webhooks on, and its RSS is followed all the way.
 *
 *   bun run bench soak                    (or: bun run bench/soak/soak.ts)
 *   SOAK_SCALE=0.1 bun run bench soak     (50,000 + 50,000, for a quick run)
 *
 * Processes: gw serve (`bun src/main.ts serve`); the fake Discord (discord.ts: 400 users, 40 of
 * them allowlisted, 10 guilds and DMs, 1 % of messages with a small file on its CDN); Messages writing
 * chat.db (lib/messages-child.ts: one transaction per row; 300 people, 250 DMs and 50 group chats, from
 * world.ts); the webhook sink (lib/sink.ts: 204, one record per delivery id); this script, which
 * paces, samples and audits.
 *
 * Pacing: a soak, not a backlog. The messages go in BENCH_SOAK_CHUNKS chunks (100: 5,000 Discord +
 * 5,000 chat.db each at scale 1); within a chunk both sources post at once, each at BENCH_SOAK_RPS / 2
 * messages/s evenly spaced; then this script waits until gw has caught up (every message of the chunk
 * stored, no webhook pending, the sink holding every allowlisted message's delivery) before the next.
 *
 * Measured: gw's RSS every second, and at every 5 % of the messages (every 50,000 at scale 1), right
 * after catch-up, the median of three readings 250 ms apart, with VmHWM, gw.db and its WAL. Target: RSS
 * at the end ≤ 1.2 × RSS after the first 5 % (50,000 messages). Rates over the whole soak, catch-up
 * waits included. After gw stops (SIGTERM), the exactly-once audit (audit.ts) reads gw.db and the
 * sink's records. BENCH_SOAK_PROBE=1 runs gw as gw.ts instead (built as gw serve builds it, in its
 * own process) and asks it at every checkpoint for its JS heap and discord.js caches, before and after a
 * full collection: where the memory is, when the target is missed.
 *
 * Environment: SOAK_SCALE (1: messages per source = 500,000 × scale), BENCH_SOAK_RPS (1000),
 * BENCH_SOAK_CHUNKS (100, a multiple of 20), BENCH_SEED (1), BENCH_CATCHUP_S (120: a chunk not caught
 * up by then fails the run), BENCH_QUIET_WAIT_S (60), BENCH_SOAK_PROBE (0), BENCH_GW_ROOT (the checkout
 * whose src/main.ts runs; default this one), BENCH_KEEP (0). Method and figures: bench/README.md.
 */
import { Database } from "bun:sqlite";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import { freePort, spawnGw, stopGw, waitFor } from "../../test/helpers/process.ts";
import { chatDbPathIn, gwEnvFor } from "../lib/chatdb.ts";
import { type Child, MESSAGES_CHILD, type Msg, startChild } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import { waitQuiet, withMachineLoad } from "../lib/machine.ts";
import { sampleProc, slope } from "../lib/proc.ts";
import { commas, report } from "../lib/report.ts";
import { startSession } from "../lib/session.ts";
import { commonEnv, flagEnv, intEnv, KEEP, PATH, progressLine, SECRET, SEED } from "../lib/settings.ts";
import { Sink } from "../lib/sink.ts";
import { dist, median, mulberry32, r1, r2 } from "../lib/stats.ts";
import { auditStore } from "./audit.ts";
import { type Checkpoint, type ProbeHeap, soakSummary } from "./report.ts";
import { allowlistToml, imessageWorld } from "./world.ts";

const SCALE = Number(process.env.SOAK_SCALE ?? "1");
if (!(SCALE > 0 && SCALE <= 10))
  throw new Error(`SOAK_SCALE must be in (0, 10], got ${process.env.SOAK_SCALE}`);
const CHUNKS = intEnv("BENCH_SOAK_CHUNKS", 100, 20);
if (CHUNKS % 20 !== 0) throw new Error(`BENCH_SOAK_CHUNKS must be a multiple of 20, got ${CHUNKS}`);
const PER_CHUNK = Math.max(1, Math.round((500_000 * SCALE) / CHUNKS));
const PER_SOURCE = PER_CHUNK * CHUNKS;
const RPS = intEnv("BENCH_SOAK_RPS", 1000, 2);
const CATCHUP_S = intEnv("BENCH_CATCHUP_S", 120, 1);
const { QUIET_WAIT_S } = commonEnv({ QUIET_WAIT_S: 60 });
const PROBE = flagEnv("BENCH_SOAK_PROBE", false);
const GW_ROOT = process.env.BENCH_GW_ROOT || join(import.meta.dir, "../..");
/** A checkpoint every 5 % of the messages; the first is the baseline. */
const EVERY = CHUNKS / 20;

const HERE = import.meta.dir;
const startedAt = performance.now();
const progress = progressLine("soak");
const sizeMiB = (p: string) => {
  try {
    return r2(statSync(p).size / 2 ** 20);
  } catch {
    return 0;
  }
};
const session = startSession(progress, KEEP);

async function startReady(name: string, args: string[], env: Record<string, string>): Promise<[Child, Msg]> {
  const { child, ready } = await startChild(name, args, env, 90_000);
  return [child, ready];
}

/** gw serve, or the probe (gw.ts): its pid, and a stop that says how it ended. */
async function startGw(env: Record<string, string>, stderrPath: string) {
  if (PROBE) {
    const [child] = await startReady("gw-probe", [join(HERE, "gw.ts")], env);
    return {
      pid: child.proc.pid,
      probe: child,
      stop: async () => {
        await child.stop();
        return (await child.proc.exited) ?? -1;
      },
    };
  }
  const gw = spawnGw(["serve"], env, { root: GW_ROOT, output: { stderrFile: stderrPath } });
  session.track(gw.proc);
  return { pid: gw.proc.pid, probe: null, stop: () => stopGw(gw) };
}

async function main() {
  const dir = session.tempDir("gw-bench-soak-");
  const chatDb = chatDbPathIn(dir);
  const dbPath = join(dir, "data/gw.db");
  const im = imessageWorld(mulberry32(SEED), { handles: 300, allowedShare: 0.15, groups: 50 });
  const [writer] = await startReady("writer", [MESSAGES_CHILD], {
    PATH,
    BENCH_CHAT_DB: chatDb,
    BENCH_CHATS: JSON.stringify(im.chats),
  });
  const [fake, fakeReady] = await startReady("fake-discord", [join(HERE, "discord.ts")], {
    PATH,
    BENCH_SEED: String(SEED),
  });
  const sink = await Sink.start(SECRET);
  writeFileSync(join(dir, "allowlist.toml"), allowlistToml(im.allowed, fakeReady.allowed as string[]));
  const port = freePort();
  const gwStderr = join(dir, "gw.stderr");
  const gw = await startGw(
    {
      ...gwEnvFor(dir, chatDb),
      GW_BIND_PORT: String(port),
      GW_LOG_STDERR_LEVEL: "warn",
      GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
      GW_COMMUNITY_API_URL: fakeReady.apiUrl as string,
      GW_WEBHOOK_URL: sink.url,
      GW_WEBHOOK_SECRET: SECRET,
    },
    gwStderr,
  );
  const health = async () =>
    (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as {
      status: string;
      connectors: Record<string, { state: string }>;
      webhooks: { queue_depth: number; dead: number };
    };
  await waitFor(
    async () => ((await health().catch(() => null))?.status === "ok" ? true : undefined),
    "gw with both connectors ok",
    60_000,
  );
  progress(
    `gw (pid ${gw.pid}${PROBE ? ", probe" : ""}) on ${port}, both connectors ok; ${commas(PER_SOURCE)} Discord messages over ${fakeReady.channels} channels + ${commas(PER_SOURCE)} chat.db rows, ${CHUNKS} chunks, ${RPS} msg/s while posting`,
  );

  const db = new Database(dbPath, { readonly: true });
  // Messages of the chunk under way: all are younger than its start, every earlier one is older.
  const storedSince = db.query<{ d: number; i: number }, [number]>(
    `SELECT (${["community_chat", "device_messenger"]
      .map(
        (s) =>
          `SELECT COUNT(*) FROM messages WHERE source = '${s}' AND allowlist_status IN ('allowed', 'unknown') AND message_ts >= ?1`,
      )
      .join(") AS d, (")}) AS i`,
  );
  const storedAll = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messages");

  const quietS = await waitQuiet(QUIET_WAIT_S, progress);
  const t0 = now();
  const samples: { tS: number; rssMiB: number; gwCpuPct: number }[] = [];
  const checkpoints: Checkpoint[] = [];
  /** A chunk's last message → all of it stored, and → caught up (webhooks too). */
  const storeLags: number[] = [];
  const sourceLags = { discord: [] as number[], imessage: [] as number[] };
  const lags: number[] = [];
  const postTimes: number[] = [];
  let stored = 0;
  let allowed = 0;
  let files = 0;
  let running = true;
  const sampler = (async () => {
    let prev = sampleProc(gw.pid);
    for (let k = 1; running; k++) {
      await Bun.sleep(Math.max(0, t0 + k * 1000 - now()));
      const s = sampleProc(gw.pid);
      samples.push({
        tS: r1((now() - t0) / 1000),
        rssMiB: r1(s.rssKiB / 1024),
        gwCpuPct: r1(((s.cpuMs - prev.cpuMs) / (s.at - prev.at)) * 100),
      });
      prev = s;
    }
  })();

  const checkpoint = async (): Promise<Checkpoint> => {
    const exact = storedAll.get()?.n ?? 0;
    if (exact !== stored) throw new Error(`gw.db holds ${exact} messages, ${stored} expected`);
    const reads = [];
    for (let i = 0; i < 3; i++) {
      if (i > 0) await Bun.sleep(250);
      reads.push(sampleProc(gw.pid));
    }
    const last = reads[2] as ReturnType<typeof sampleProc>;
    const since = checkpoints[checkpoints.length - 1]?.tS ?? 0;
    const window = samples.filter((s) => s.tS > since).map((s) => s.rssMiB);
    const probe = gw.probe
      ? {
          before: (await gw.probe.request({ cmd: "heap", gc: false }, 60_000)) as unknown as ProbeHeap,
          after: (await gw.probe.request({ cmd: "heap", gc: true }, 60_000)) as unknown as ProbeHeap,
        }
      : undefined;
    return {
      stored,
      tS: r1((now() - t0) / 1000),
      rssMiB: r1(median(reads.map((r) => r.rssKiB / 1024))),
      windowMinMiB: Math.min(...window),
      windowMaxMiB: Math.max(...window),
      hwmMiB: r1(last.hwmKiB / 1024),
      gwCpuS: r1(last.cpuMs / 1000),
      dbMiB: sizeMiB(dbPath),
      walMiB: sizeMiB(`${dbPath}-wal`),
      attachments: readdirSync(join(dir, "data/attachments")).length,
      fakeRssMiB: r1(sampleProc(fake.proc.pid).rssKiB / 1024),
      ...(probe ? { probe } : {}),
    };
  };

  const [, machineLoad] = await withMachineLoad(async () => {
    for (let c = 0; c < CHUNKS; c++) {
      const from = c * PER_CHUNK;
      const chunkStartMs = Date.now();
      const tPost = now();
      const rows = im.rows(from, PER_CHUNK);
      const timeout = (PER_CHUNK / (RPS / 2)) * 1000 + 60_000;
      const [dc] = await Promise.all([
        fake.request({ cmd: "run", from, n: PER_CHUNK, rps: RPS / 2 }, timeout),
        writer.request(
          { cmd: "run", t0: now() + writer.offsetMs, rps: RPS / 2, messages: rows.rows },
          timeout,
        ),
      ]);
      const tPosted = now();
      postTimes.push(tPosted - tPost);
      allowed += rows.allowed + (dc.allowed as number);
      files += dc.attachments as number;
      const want = 2 * PER_CHUNK;
      let tStored: number | null = null;
      const tSource: { discord: number | null; imessage: number | null } = { discord: null, imessage: null };
      for (const deadline = tPosted + CATCHUP_S * 1000; ; ) {
        const h = await health();
        const n = storedSince.get(chunkStartMs) ?? { d: 0, i: 0 };
        const at = { chunk: n.d + n.i, pending: h.webhooks.queue_depth, sink: (await sink.count()).n };
        if (tSource.discord === null && n.d >= PER_CHUNK) tSource.discord = now();
        if (tSource.imessage === null && n.i >= PER_CHUNK) tSource.imessage = now();
        if (tStored === null && at.chunk >= want) tStored = now();
        if (at.chunk >= want && at.pending === 0 && at.sink >= allowed) break;
        if (now() > deadline)
          throw new Error(
            `chunk ${c + 1}: not caught up ${CATCHUP_S} s after its last message: ${JSON.stringify(at)} (want ${want} stored, ${allowed} delivered); connectors ${JSON.stringify(h.connectors)}`,
          );
        await Bun.sleep(50);
      }
      lags.push(now() - tPosted);
      storeLags.push((tStored ?? now()) - tPosted);
      sourceLags.discord.push((tSource.discord ?? now()) - tPosted);
      sourceLags.imessage.push((tSource.imessage ?? now()) - tPosted);
      stored += want;
      if ((c + 1) % EVERY === 0) {
        const cp = await checkpoint();
        checkpoints.push(cp);
        const base = (checkpoints[0] as Checkpoint).rssMiB;
        progress(
          `${commas(cp.stored)} stored at ${cp.tS} s: RSS ${cp.rssMiB} MiB (${r2(cp.rssMiB / base)}× the first; 1 s samples ${cp.windowMinMiB}–${cp.windowMaxMiB}), peak ${cp.hwmMiB}, gw.db ${cp.dbMiB} MiB, WAL ${cp.walMiB}; fake Discord ${cp.fakeRssMiB} MiB${cp.probe ? `; JS heap ${cp.probe.before.heapSizeMiB} → ${cp.probe.after.heapSizeMiB} MiB after GC, RSS ${cp.probe.after.rssMiB}` : ""}`,
        );
      }
    }
  });
  const soakS = (now() - t0) / 1000;
  running = false;
  await sampler;

  // Stop gw and audit what it left.
  const hEnd = await health();
  const tStop = now();
  const exitCode = await gw.stop();
  const stopMs = Math.round(now() - tStop);
  const arrivals = await sink.arrivals();
  await Promise.all([fake.stop(), writer.stop(), sink.stop()]);
  db.close();
  const audit = auditStore(dbPath, PER_SOURCE, arrivals);
  /** gw's warnings and errors (its stderr at GW_LOG_STDERR_LEVEL=warn), counted by message. */
  const warnings = new Map<string, number>();
  for (const l of (PROBE ? "" : readFileSync(gwStderr, "utf8")).split("\n")) {
    if (l.trim() === "") continue;
    let msg = l.slice(0, 200);
    try {
      msg = String((JSON.parse(l) as { msg?: unknown }).msg);
    } catch {}
    warnings.set(msg, (warnings.get(msg) ?? 0) + 1);
  }

  // RSS trend after the first checkpoint: least-squares slope of the 1 s samples, per 100,000 stored.
  const after = samples.filter((x) => x.tS > (checkpoints[0] as Checkpoint).tS);
  const trendPer100k = r2(
    slope(after.map((x) => [x.tS, x.rssMiB] as [number, number])) * (100_000 / ((2 * PER_SOURCE) / soakS)),
  );
  const run = {
    scale: SCALE,
    trendPer100k,
    perSource: PER_SOURCE,
    perChunk: PER_CHUNK,
    chunks: CHUNKS,
    rps: RPS,
    probe: PROBE,
    soakS,
    allowed,
    files,
    checkpoints,
    storeLag: dist(storeLags),
    sourceLag: { discord: dist(sourceLags.discord), imessage: dist(sourceLags.imessage) },
    lag: dist(lags),
    postMs: dist(postTimes),
    busyPct: machineLoad.busyPctAllCores,
    audit,
    sink: { ids: arrivals.byId.size, dupes: arrivals.dupes, bad: arrivals.bad },
    stop: { exitCode, ms: stopMs },
    health: hEnd,
    warnings,
  };
  const { summary, lines, ratio } = soakSummary(run);
  const env = [SCALE === 1 ? "" : `SOAK_SCALE=${SCALE}`, PROBE ? "BENCH_SOAK_PROBE=1" : ""].filter(Boolean);
  report({
    bench: "soak",
    command: [...env, "bun run bench soak"].join(" "),
    startedAt,
    summary,
    lines,
    results: {
      settings: {
        scale: SCALE,
        perSource: PER_SOURCE,
        chunks: CHUNKS,
        perChunkPerSource: PER_CHUNK,
        rps: RPS,
        seed: SEED,
        probe: PROBE,
        channels: { discord: fakeReady.channels, imessage: im.chats.length },
        gwRoot: GW_ROOT,
        quietWaitS: quietS,
      },
      pacing: `${CHUNKS} chunks; in each, ${commas(PER_CHUNK)} MESSAGE_CREATEs and ${commas(PER_CHUNK)} chat.db rows posted at once at ${RPS / 2}/s each, then a wait until all are stored, no webhook is pending and the sink has every delivery`,
      soakS: r1(soakS),
      storedPerS: r1((2 * PER_SOURCE) / soakS),
      deliveredPerS: r1(allowed / soakS),
      rss: { ratio, trendMiBPer100k: trendPer100k, checkpoints },
      lagMs: { stored: run.storeLag, caughtUp: run.lag, ...run.sourceLag },
      postMs: run.postMs,
      machineLoad,
      audit,
      sink: run.sink,
      stop: run.stop,
      healthAtEnd: hEnd,
      gwWarnings: Object.fromEntries(warnings),
      /** One reading a second from the first chunk on, as text to keep the file small. */
      everySecond: {
        rssMiB: samples.map((x) => x.rssMiB).join(" "),
        gwCpuPct: samples.map((x) => x.gwCpuPct).join(" "),
      },
    },
  });
}

try {
  await main();
} finally {
  session.cleanup();
}
process.exit(0);
