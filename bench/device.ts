/**
 * Benchmark: the iMessage (device-messenger) connector end to end, each figure next to a raw baseline
 * measured in the same run.
 *
 *   bun run bench/device.ts
 *
 * Processes: this script plays Messages (it writes chat.db rows with openChatDbWriter, WAL mode, one
 * transaction per message) and the agent (it polls GET /messages/unread over 127.0.0.1). gw runs in its
 * own process (bench/device-gw.ts: createService + buildConnectors + app.listen, as `gw serve`), and so
 * does every baseline (bench/device-raw.ts), so writer, gw and baselines never share an event loop.
 *
 * 1. notify:  gw with file-change notifications on. BENCH_SAMPLES_ON samples (after BENCH_WARMUP
 *             untimed ones): commit one message, then GET /messages/unread every BENCH_STEP_MS until it
 *             is listed, mark it read, wait 30–130 ms (seeded random), repeat. Baseline, on the same
 *             commits: a raw fs.watch on chat.db's directory (no debounce, re-check every 1 ms).
 * 2. poll:    gw with notifications off (poll timer only, GW_DEVICE_POLL_INTERVAL_MS = BENCH_POLL_MS).
 *             BENCH_SAMPLES_OFF samples; the pause after each one is a golden-ratio fraction of the poll
 *             interval, so commits land at evenly spread phases of the timer (one sample per interval).
 *             Baseline, on the same commits: a bare loop doing PRAGMA data_version + MAX(ROWID) at the
 *             same interval.
 * 3. backlog: gw stopped; BENCH_BACKLOG rows written in transactions of BENCH_BACKLOG_TX (timed apart);
 *             baselines: a raw SELECT of those rows, and the connector's read path with a no-op ingest;
 *             then gw started on the same paths, timed from svc.start() until the device_messenger cursor
 *             reaches the last ROWID (start() reads synchronously, so that is start()'s duration).
 * 4. idle:    a fresh gw (notifications on), the same script with nothing started, and the bare poll
 *             loop, side by side for BENCH_IDLE_S after a 3 s settle: CPU % of one core from each process's
 *             CPU time (getrusage), RSS at start/end (and every 10 s).
 *
 * Latency = visible − commit, where commit is the instant writer.message() returned (the COMMIT, fsync
 * included, is done) and visible is when the /messages/unread response that lists the message arrived;
 * the send time of the last request that did not list it is reported too, as a lower bound, and so is
 * the instant gw's ingest transaction for the row returned, stamped inside gw (BENCH_TRACE_INGEST in
 * device-gw.ts). The targets are judged on the first figure, what a polling agent sees. All processes
 * stamp `performance.timeOrigin + performance.now()`; each child's clock offset to this process is
 * measured with 25 pings (min round trip) and subtracted.
 *
 * Environment: BENCH_SAMPLES_ON (200), BENCH_SAMPLES_OFF (120), BENCH_WARMUP (10; poll mode uses at most
 * 3), BENCH_POLL_MS (1000), BENCH_STEP_MS (2), BENCH_BACKLOG (50000), BENCH_BACKLOG_TX (5000),
 * BENCH_IDLE_S (60; 600 for 10 min), BENCH_PHASES (notify,poll,backlog,idle), BENCH_SEED (1),
 * BENCH_KEEP (1 keeps the temp directory).
 * Prints a table and one JSON line on stdout; progress on stderr. Write-up: bench/device-results.md.
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ChatDbWriter, openChatDbWriter } from "../src/demo/chatdb-writer.ts";
import { Child, live } from "./lib/child.ts";
import type { ProcessStats } from "./lib/child-protocol.ts";
import { now } from "./lib/child-protocol.ts";
import { type Dist, dist, intEnv, mulberry32, pct } from "./lib/stats.ts";

// ---------------------------------------------------------------------------------------------------
// Configuration

const SAMPLES_ON = intEnv("BENCH_SAMPLES_ON", 200, 1);
const SAMPLES_OFF = intEnv("BENCH_SAMPLES_OFF", 120, 1);
const WARMUP = intEnv("BENCH_WARMUP", 10, 0);
/** Each poll-mode sample costs one poll interval, so that mode warms up with fewer. */
const WARMUP_OFF = Math.min(WARMUP, 3);
const POLL_MS = intEnv("BENCH_POLL_MS", 1000, 10);
const STEP_MS = intEnv("BENCH_STEP_MS", 2, 0);
const BACKLOG = intEnv("BENCH_BACKLOG", 50_000, 1);
const BACKLOG_TX = intEnv("BENCH_BACKLOG_TX", 5_000, 1);
const IDLE_S = intEnv("BENCH_IDLE_S", 60, 1);
const SEED = intEnv("BENCH_SEED", 1, 0);
const KEEP = intEnv("BENCH_KEEP", 0, 0) === 1;
const PHASES = new Set(
  (process.env.BENCH_PHASES ?? "notify,poll,backlog,idle").split(",").map((s) => s.trim()),
);
for (const p of PHASES) {
  if (!["notify", "poll", "backlog", "idle"].includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p}`);
}

const TARGET = { notifyP50: 50, notifyP99: 250, pollSlackMs: 100, backlogPerS: 20_000, idleCpuPct: 1 };
/** RSS growth over the idle window that still counts as "no growth" (allocator noise). */
const RSS_TOLERANCE = 1024 * 1024;
const SETTLE_MS = 3000;

const TOKEN = `bench-${crypto.randomUUID()}`;
const AGENT = "bench-agent";
const FRIEND = "+15555550100";
const STRANGER = "+15555550199";
const FRIEND_CHAT = `any;-;${FRIEND}`;
const STRANGER_CHAT = `any;-;${STRANGER}`;
const GROUP_CHAT = "any;+;chat123456789";
const ALLOWLIST = `
[[entry]]
source = "device_messenger"
id = "${FRIEND}"
person_id = "ann"
display_name = "Ann"
`;
const HERE = import.meta.dir;

const progress = (s: string) => process.stderr.write(`[device] ${s}\n`);

const random = mulberry32(SEED);

// ---------------------------------------------------------------------------------------------------
// Work directory, chat.db, gw environment

const dir = mkdtempSync(join(tmpdir(), "gw-bench-device-"));
const chatDbPath = join(dir, "Library/Messages/chat.db");
const gwDbPath = join(dir, "data/gw.db");
mkdirSync(dirname(chatDbPath), { recursive: true });
writeFileSync(join(dir, "allowlist.toml"), ALLOWLIST);

let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const c of live) c.proc.kill();
  if (KEEP) progress(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}

const gwEnv: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: dir,
  GW_BEARER_TOKEN: TOKEN,
  GW_BIND_HOST: "127.0.0.1",
  GW_DB_PATH: gwDbPath,
  GW_ATTACHMENT_DIR: join(dir, "data/attachments"),
  GW_LOG_DIR: join(dir, "logs"),
  GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
  GW_CHAT_DB_PATH: chatDbPath,
  GW_DEVICE_POLL_INTERVAL_MS: String(POLL_MS),
};

async function startGw(mode: "on" | "off" | "bare", extra: Record<string, string> = {}) {
  const child = new Child(`gw(${mode})`, [join(HERE, "device-gw.ts"), mode], { ...gwEnv, ...extra });
  const ready = await child.waitFor((m) => "ready" in m, 120_000, "ready");
  if (extra.BENCH_TRACE_INGEST === "1") await child.calibrate();
  return { child, ready, port: ready.ready as number };
}

async function startRaw(mode: "poll" | "watch", arg?: string) {
  const args = [join(HERE, "device-raw.ts"), mode, chatDbPath, ...(arg ? [arg] : [])];
  const child = new Child(`raw(${mode})`, args, { PATH: gwEnv.PATH as string, HOME: dir });
  await child.waitFor((m) => "ready" in m, 30_000, "ready");
  await child.calibrate();
  return child;
}

function setupChatDb(): ChatDbWriter {
  const writer = openChatDbWriter(chatDbPath);
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: STRANGER_CHAT, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  writer.chat({
    guid: GROUP_CHAT,
    style: 43,
    chatIdentifier: "chat123456789",
    displayName: "Trip",
    participants: [FRIEND, STRANGER],
  });
  return writer;
}

// ---------------------------------------------------------------------------------------------------
// Latency: commit → listed in GET /messages/unread

interface LatencyResult {
  /** Until the response listing the message arrived. */
  gw: Dist;
  /** Until the previous (missing) request was sent: a lower bound, without the detection delay. */
  gwLower: Dist;
  /** Until gw's ingest transaction for the row returned (stamped inside gw): listed by any later GET. */
  gwStored: Dist;
  raw: Dist;
  rawWake?: Dist;
  commit: Dist;
  pollRequests: Dist;
  requestRtt: Dist;
  timeouts: number;
  rawMissing: number;
  rawOffsetMs: number;
  rawOffsetErrMs: number;
  gwOffsetMs: number;
  gwOffsetErrMs: number;
  wallS: number;
}

async function latencyPhase(
  name: string,
  writer: ChatDbWriter,
  gwChild: Child,
  port: number,
  raw: Child,
  opts: {
    samples: number;
    warmup: number;
    gapMs: (i: number) => number;
    timeoutMs: number;
    waitRaw: boolean;
  },
): Promise<LatencyResult> {
  const url = `http://127.0.0.1:${port}/messages/unread?limit=20`;
  const headers = { authorization: `Bearer ${TOKEN}`, "x-agent-id": AGENT };
  const markUrl = `http://127.0.0.1:${port}/messages/mark_read`;
  const nonce = crypto.randomUUID().slice(0, 8);
  const samples: {
    rowid: number;
    tBegin: number;
    tCommit: number;
    commitMs: number;
    gwMs: number;
    gwLowerMs: number;
    polls: number;
  }[] = [];
  const rtts: number[] = [];
  let timeouts = 0;
  const t0 = now();
  for (let i = 0; i < opts.warmup + opts.samples; i++) {
    await Bun.sleep(opts.gapMs(i));
    const text = `bench ${name} ${nonce} #${i}`;
    const tBegin = now();
    const { rowid } = writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
    const tCommit = now();
    let tVisible: number | null = null;
    /** Send time of the last request that did not list the message: the row became visible after it. */
    let tLastMiss = tCommit;
    let polls = 0;
    let ids: string[] = [];
    while (now() - tCommit < opts.timeoutMs) {
      const tReq = now();
      const res = await fetch(url, { headers });
      const body = (await res.json()) as { messages: { id: string; text: string }[] };
      const tRes = now();
      rtts.push(tRes - tReq);
      polls += 1;
      if (!res.ok) throw new Error(`GET /messages/unread: ${res.status} ${JSON.stringify(body)}`);
      if (body.messages.some((m) => m.text === text)) {
        tVisible = tRes;
        ids = body.messages.map((m) => m.id);
        break;
      }
      tLastMiss = tReq;
      if (STEP_MS > 0) await Bun.sleep(STEP_MS);
    }
    if (ids.length > 0) {
      const res = await fetch(markUrl, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ message_ids: ids }),
      });
      if (!res.ok) throw new Error(`POST /messages/mark_read: ${res.status}`);
    }
    if (opts.waitRaw) {
      await raw.waitFor((m) => typeof m.seen === "number" && m.seen >= rowid, opts.timeoutMs, `row ${rowid}`);
    }
    if (i < opts.warmup) continue;
    if (tVisible === null) timeouts += 1;
    samples.push({
      rowid,
      tBegin,
      tCommit,
      commitMs: tCommit - tBegin,
      gwMs: tVisible === null ? opts.timeoutMs : tVisible - tCommit,
      gwLowerMs: tVisible === null ? opts.timeoutMs : tLastMiss - tCommit,
      polls,
    });
    if ((i - opts.warmup + 1) % 50 === 0) progress(`${name}: ${i - opts.warmup + 1}/${opts.samples}`);
  }
  const last = samples[samples.length - 1]?.rowid ?? 0;
  await raw
    .waitFor((m) => typeof m.seen === "number" && m.seen >= last, POLL_MS * 3 + 1000, `row ${last}`)
    .catch(() => undefined);
  const storedMs: number[] = [];
  for (const s of samples) {
    const m = gwChild.msgs.find((x) => typeof x.ingested === "number" && x.ingested >= s.rowid);
    if (m) storedMs.push((m.t as number) - gwChild.offsetMs - s.tCommit);
  }
  const rawMs: number[] = [];
  const wakeMs: number[] = [];
  let rawMissing = 0;
  for (const s of samples) {
    const seen = raw.msgs.find((m) => typeof m.seen === "number" && m.seen >= s.rowid);
    if (!seen) {
      rawMissing += 1;
      continue;
    }
    rawMs.push((seen.t as number) - raw.offsetMs - s.tCommit);
    const wake = raw.msgs.find((m) => typeof m.event === "number" && m.event - raw.offsetMs >= s.tBegin);
    if (wake && (wake.event as number) - raw.offsetMs <= (seen.t as number) - raw.offsetMs) {
      wakeMs.push((wake.event as number) - raw.offsetMs - s.tCommit);
    }
  }
  return {
    gw: dist(samples.map((s) => s.gwMs)),
    gwLower: dist(samples.map((s) => s.gwLowerMs)),
    gwStored: dist(storedMs),
    raw: dist(rawMs),
    ...(wakeMs.length > 0 ? { rawWake: dist(wakeMs) } : {}),
    commit: dist(samples.map((s) => s.commitMs)),
    pollRequests: dist(samples.map((s) => s.polls)),
    requestRtt: dist(rtts),
    timeouts,
    rawMissing,
    rawOffsetMs: Math.round(raw.offsetMs * 1000) / 1000,
    rawOffsetErrMs: Math.round(raw.offsetErrMs * 1000) / 1000,
    gwOffsetMs: Math.round(gwChild.offsetMs * 1000) / 1000,
    gwOffsetErrMs: Math.round(gwChild.offsetErrMs * 1000) / 1000,
    wallS: Math.round((now() - t0) / 100) / 10,
  };
}

// ---------------------------------------------------------------------------------------------------
// Phases

const results: Record<string, unknown> = {};
const verdicts: { target: string; figure: string; baseline: string; pass: boolean }[] = [];
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");

async function notifyPhase(writer: ChatDbWriter) {
  progress(`notify: gw with file-change notifications on, ${SAMPLES_ON} samples (+${WARMUP} warm-up)`);
  const gw = await startGw("on", { BENCH_TRACE_INGEST: "1" });
  const raw = await startRaw("watch");
  try {
    const r = await latencyPhase("notify", writer, gw.child, gw.port, raw, {
      samples: SAMPLES_ON,
      warmup: WARMUP,
      gapMs: () => 30 + Math.floor(random() * 100),
      timeoutMs: 3000,
      waitRaw: true,
    });
    results.notify = r;
    verdicts.push({
      target: `notify: p50 <= ${TARGET.notifyP50} ms, p99 <= ${TARGET.notifyP99} ms`,
      figure: `p50 ${f1(r.gw.p50)}, p99 ${f1(r.gw.p99)}, max ${f1(r.gw.max)} ms (ingest committed: p50 ${f1(r.gwStored.p50)}, p99 ${f1(r.gwStored.p99)})`,
      baseline: `raw fs.watch: p50 ${f1(r.raw.p50)}, p99 ${f1(r.raw.p99)} ms`,
      pass: r.timeouts === 0 && r.gw.p50 <= TARGET.notifyP50 && r.gw.p99 <= TARGET.notifyP99,
    });
  } finally {
    await gw.child.stop();
    await raw.stop();
  }
}

async function pollPhase(writer: ChatDbWriter) {
  progress(
    `poll: gw with notifications off, ${POLL_MS} ms timer, ${SAMPLES_OFF} samples (+${WARMUP_OFF} warm-up)`,
  );
  const gw = await startGw("off", { BENCH_TRACE_INGEST: "1" });
  const raw = await startRaw("poll", String(POLL_MS));
  const phi = (Math.sqrt(5) - 1) / 2;
  try {
    const r = await latencyPhase("poll", writer, gw.child, gw.port, raw, {
      samples: SAMPLES_OFF,
      warmup: WARMUP_OFF,
      gapMs: (i) => Math.floor(((0.5 + i * phi) % 1) * POLL_MS),
      timeoutMs: POLL_MS * 3 + 500,
      waitRaw: false,
    });
    results.poll = r;
    const limit = POLL_MS + TARGET.pollSlackMs;
    verdicts.push({
      target: `poll: max <= ${limit} ms (interval + ${TARGET.pollSlackMs})`,
      figure: `p50 ${f1(r.gw.p50)}, p99 ${f1(r.gw.p99)}, max ${f1(r.gw.max)} ms`,
      baseline: `raw poll loop: p50 ${f1(r.raw.p50)}, max ${f1(r.raw.max)} ms`,
      pass: r.timeouts === 0 && r.gw.max <= limit,
    });
  } finally {
    await gw.child.stop();
    await raw.stop();
  }
}

function countStored(): { total: number; device: number } {
  const db = new Database(gwDbPath, { readonly: true });
  try {
    const q = (sql: string) => (db.query(sql).get() as { n: number }).n;
    return {
      total: q("SELECT COUNT(*) AS n FROM messages"),
      device: q("SELECT COUNT(*) AS n FROM messages WHERE source = 'device_messenger'"),
    };
  } finally {
    db.close();
  }
}

async function backlogPhase(writer: ChatDbWriter) {
  // gw must have run once so that its cursor exists (a first start begins at the end of chat.db).
  if (!PHASES.has("notify") && !PHASES.has("poll")) {
    const gw = await startGw("on");
    await gw.child.stop();
  }
  const before = countStored();
  const from = writer.maxRowid();
  progress(`backlog: gw stopped; writing ${BACKLOG} rows in transactions of ${BACKLOG_TX}`);
  const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split(" ");
  const tSeed = now();
  for (let done = 0; done < BACKLOG; done += BACKLOG_TX) {
    writer.db.transaction(() => {
      for (let i = done; i < Math.min(BACKLOG, done + BACKLOG_TX); i++) {
        const text = `backlog ${i} ${words.slice(0, 2 + (i % 10)).join(" ")}`;
        // 80 % from the allowlisted friend, 10 % from a stranger (quarantine), 10 % in a group.
        const k = i % 10;
        if (k === 0) writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text });
        else if (k === 1)
          writer.message({ chatGuid: GROUP_CHAT, from: i % 20 === 1 ? FRIEND : STRANGER, text });
        else writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
      }
    })();
  }
  const seedMs = now() - tSeed;
  const last = writer.maxRowid();
  progress(`backlog: seeded rows ${from + 1}..${last} in ${(seedMs / 1000).toFixed(1)} s; raw baselines`);

  const sel = new Child(
    "raw(select)",
    [join(HERE, "device-raw.ts"), "select", chatDbPath, String(from), "3"],
    {
      PATH: gwEnv.PATH as string,
      HOME: dir,
    },
  );
  const selMsg = await sel.waitFor((m) => "select" in m, 120_000, "select");
  const normalized = (sel.msgs.find((m) => "normalized" in m)?.normalized as number) ?? 0;
  await sel.proc.exited;
  live.delete(sel);
  const s = selMsg.select as { rawMs: number[]; rawRows: number; readerMs: number[]; readerRows: number };

  progress("backlog: starting gw on the same paths");
  const tSpawn = now();
  const gw = await startGw("on", { BENCH_EXPECT_ROWID: String(last) });
  const readyAfterSpawnMs = now() - tSpawn;
  await gw.child.stop();
  const after = countStored();
  const rows = last - from;
  const caughtUpMs = gw.ready.caughtUpMs as number;
  const median = (xs: number[]) =>
    pct(
      [...xs].sort((a, b) => a - b),
      50,
    );
  const r = {
    rows,
    seed: { ms: Math.round(seedMs), perS: Math.round(rows / (seedMs / 1000)), txRows: BACKLOG_TX },
    gw: {
      caughtUpMs: Math.round(caughtUpMs),
      perS: Math.round(rows / (caughtUpMs / 1000)),
      createServiceMs: Math.round(gw.ready.createMs as number),
      spawnToReadyMs: Math.round(readyAfterSpawnMs),
      perSFromSpawn: Math.round(rows / (readyAfterSpawnMs / 1000)),
      stored: after.device - before.device,
      expectedStored: normalized,
    },
    rawSelect: {
      ms: s.rawMs.map((x) => Math.round(x * 10) / 10),
      rows: s.rawRows,
      perS: Math.round(s.rawRows / (median(s.rawMs) / 1000)),
    },
    readerNoIngest: {
      ms: s.readerMs.map((x) => Math.round(x * 10) / 10),
      rows: s.readerRows,
      perS: Math.round(s.readerRows / (median(s.readerMs) / 1000)),
    },
  };
  results.backlog = r;
  verdicts.push({
    target: `backlog: >= ${TARGET.backlogPerS} msg/s`,
    figure: `${r.gw.perS} msg/s (${rows} rows in ${r.gw.caughtUpMs} ms)`,
    baseline: `raw SELECT ${r.rawSelect.perS}/s; read path w/o ingest ${r.readerNoIngest.perS}/s`,
    pass: r.gw.perS >= TARGET.backlogPerS && r.gw.stored === normalized,
  });
}

async function idlePhase() {
  progress(`idle: gw (notifications on), bare process and raw poll loop side by side for ${IDLE_S} s`);
  const gw = await startGw("on");
  const bare = await startGw("bare");
  const poll = await startRaw("poll", String(POLL_MS));
  const procs = [
    { name: "gw", child: gw.child },
    { name: "bare", child: bare.child },
    { name: "rawPoll", child: poll },
  ];
  try {
    await Bun.sleep(SETTLE_MS);
    const first = await Promise.all(procs.map((p) => p.child.stats()));
    const rss: number[][] = first.map((s) => [s.rssBytes]);
    const end = Date.now() + IDLE_S * 1000;
    while (Date.now() < end) {
      await Bun.sleep(Math.min(10_000, end - Date.now()));
      if (Date.now() < end - 1000) {
        const mid = await Promise.all(procs.map((p) => p.child.stats()));
        for (const [i, s] of mid.entries()) rss[i]?.push(s.rssBytes);
      }
    }
    const last = await Promise.all(procs.map((p) => p.child.stats()));
    const out: Record<string, unknown> = {};
    procs.forEach((p, i) => {
      const a = first[i] as ProcessStats;
      const b = last[i] as ProcessStats;
      const cpuUs = b.cpuUserUs + b.cpuSystemUs - a.cpuUserUs - a.cpuSystemUs;
      const wallMs = b.monoMs - a.monoMs;
      rss[i]?.push(b.rssBytes);
      out[p.name] = {
        wallS: Math.round(wallMs / 100) / 10,
        cpuMs: Math.round(cpuUs / 100) / 10,
        cpuPct: Math.round((cpuUs / 1000 / wallMs) * 100 * 1000) / 1000,
        rssStartMiB: Math.round((a.rssBytes / 1048576) * 100) / 100,
        rssEndMiB: Math.round((b.rssBytes / 1048576) * 100) / 100,
        rssMaxMiB: Math.round((Math.max(...(rss[i] ?? [])) / 1048576) * 100) / 100,
        rssGrowthKiB: Math.round((b.rssBytes - a.rssBytes) / 1024),
        heapStartMiB: Math.round((a.heapUsedBytes / 1048576) * 100) / 100,
        heapEndMiB: Math.round((b.heapUsedBytes / 1048576) * 100) / 100,
        rssSamplesMiB: (rss[i] ?? []).map((x) => Math.round((x / 1048576) * 10) / 10),
      };
    });
    results.idle = out;
    const g = out.gw as { cpuPct: number; rssGrowthKiB: number; rssStartMiB: number; rssEndMiB: number };
    const b = out.bare as { cpuPct: number; rssGrowthKiB: number };
    const rp = out.rawPoll as { cpuPct: number };
    verdicts.push({
      target: `idle: <= ${TARGET.idleCpuPct} % of a core, no RSS growth (<= ${RSS_TOLERANCE / 1024} KiB)`,
      figure: `${g.cpuPct.toFixed(3)} %, RSS ${g.rssStartMiB} -> ${g.rssEndMiB} MiB (${g.rssGrowthKiB} KiB)`,
      baseline: `bare ${b.cpuPct.toFixed(3)} % (${b.rssGrowthKiB} KiB); raw poll ${rp.cpuPct.toFixed(3)} %`,
      pass: g.cpuPct <= TARGET.idleCpuPct && g.rssGrowthKiB * 1024 <= RSS_TOLERANCE,
    });
  } finally {
    for (const p of procs) await p.child.stop();
  }
}

// ---------------------------------------------------------------------------------------------------
// Machine load during a phase (this bench's own processes included)

/** Busy and total jiffies over all CPUs from /proc/stat (Linux), or null elsewhere. */
function cpuJiffies(): { busy: number; total: number } | null {
  try {
    const f = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
      .trim()
      .split(/\s+/)
      .slice(1, 9)
      .map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
  } catch {
    return null;
  }
}

const machineLoad: Record<string, { busyPctAllCores: number | null; load1Start: number; load1End: number }> =
  {};

async function phase(name: string, run: () => Promise<void>): Promise<void> {
  const load1Start = Math.round((loadavg()[0] ?? 0) * 100) / 100;
  if (load1Start > 0.5) progress(`${name}: warning: 1-min load average is ${load1Start} before the phase`);
  const a = cpuJiffies();
  await run();
  const b = cpuJiffies();
  machineLoad[name] = {
    busyPctAllCores: a && b ? Math.round(((b.busy - a.busy) / (b.total - a.total || 1)) * 1000) / 10 : null,
    load1Start,
    load1End: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

// ---------------------------------------------------------------------------------------------------
// Main

/** Newest modification time of the sources a run loads, to flag edits made while it ran. */
function newestSourceMtime(): number {
  let newest = 0;
  for (const f of new Bun.Glob("{src,bench}/**/*.ts").scanSync({ cwd: join(HERE, "..") })) {
    newest = Math.max(newest, Bun.file(join(HERE, "..", f)).lastModified);
  }
  return newest;
}

function gitRevision(): string {
  const run = (args: string[]) =>
    Bun.spawnSync(["git", ...args], { cwd: join(HERE, ".."), stdout: "pipe", stderr: "ignore" })
      .stdout.toString()
      .trim();
  const head = run(["rev-parse", "--short", "HEAD"]) || "unknown";
  return run(["status", "--porcelain", "--", "src", "bench"]) === "" ? head : `${head}+dirty`;
}

const tMain = now();
const sourcesAtStart = newestSourceMtime();
const machine = {
  revision: gitRevision(),
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  platform: `${process.platform} ${process.arch}`,
  bun: Bun.version,
  sqlite: (() => {
    const db = new Database(":memory:");
    const v = (db.query("SELECT sqlite_version() AS v").get() as { v: string }).v;
    db.close();
    return v;
  })(),
};
progress(`work dir ${dir}; ${machine.cpus} cpus, bun ${machine.bun}, sqlite ${machine.sqlite}`);
const writer = setupChatDb();
try {
  if (PHASES.has("notify")) await phase("notify", () => notifyPhase(writer));
  if (PHASES.has("poll")) await phase("poll", () => pollPhase(writer));
  if (PHASES.has("backlog")) await phase("backlog", () => backlogPhase(writer));
  if (PHASES.has("idle")) await phase("idle", idlePhase);
} finally {
  writer.close();
  cleanup();
}
const totalS = Math.round((now() - tMain) / 100) / 10;
const sourcesChanged = newestSourceMtime() !== sourcesAtStart;
if (sourcesChanged)
  progress("warning: files under src/ or bench/ changed during the run; figures may mix versions");

// ---------------------------------------------------------------------------------------------------
// Report

const lines: string[] = [];
const pad = (s: string, n: number) => s.padEnd(n);
lines.push(
  `device-messenger bench @ ${machine.revision}: ${machine.cpus} cpus, bun ${machine.bun}, sqlite ${machine.sqlite}, poll ${POLL_MS} ms, ${totalS} s${sourcesChanged ? " (SOURCES CHANGED DURING THE RUN)" : ""}`,
);
const latRow = (label: string, d: Dist) =>
  `  ${pad(label, 34)} ${[d.n, d.p50, d.p90, d.p99, d.max, d.mean].map((x) => String(Math.round(x * 10) / 10).padStart(8)).join("")}`;
for (const [key, title, rawTitle] of [
  ["notify", "notifications on", "raw fs.watch (+1 ms re-check)"],
  ["poll", "notifications off", `raw poll loop (${POLL_MS} ms)`],
] as const) {
  const r = results[key] as LatencyResult | undefined;
  if (!r) continue;
  lines.push("");
  lines.push(
    `commit -> visible, ${title} (ms)      ${["n", "p50", "p90", "p99", "max", "mean"].map((h) => h.padStart(8)).join("")}`,
  );
  lines.push(latRow("gw: GET /messages/unread", r.gw));
  lines.push(latRow("gw: lower bound (last miss sent)", r.gwLower));
  lines.push(latRow("gw: ingest committed (in gw)", r.gwStored));
  lines.push(latRow(rawTitle, r.raw));
  if (r.rawWake) lines.push(latRow("raw fs.watch first event", r.rawWake));
  lines.push(latRow("writer commit duration", r.commit));
  lines.push(latRow("HTTP poll round trip", r.requestRtt));
  lines.push(
    `  timeouts ${r.timeouts}, baseline misses ${r.rawMissing}, clock offsets raw ${r.rawOffsetMs} ± ${r.rawOffsetErrMs} ms, gw ${r.gwOffsetMs} ± ${r.gwOffsetErrMs} ms, ${r.wallS} s`,
  );
}
const bl = results.backlog as
  | {
      rows: number;
      seed: { ms: number; perS: number };
      gw: { caughtUpMs: number; perS: number; spawnToReadyMs: number; perSFromSpawn: number; stored: number };
      rawSelect: { ms: number[]; perS: number };
      readerNoIngest: { ms: number[]; perS: number };
    }
  | undefined;
if (bl) {
  lines.push("");
  lines.push(`backlog of ${bl.rows} rows written while gw was stopped`);
  lines.push(`  seeding (writer, ${BACKLOG_TX}/tx)              ${bl.seed.ms} ms   ${bl.seed.perS} rows/s`);
  lines.push(
    `  raw SELECT of the rows (median of 3)     ${bl.rawSelect.ms.join(", ")} ms   ${bl.rawSelect.perS} rows/s`,
  );
  lines.push(
    `  read path, no-op ingest (median of 3)    ${bl.readerNoIngest.ms.join(", ")} ms   ${bl.readerNoIngest.perS} rows/s`,
  );
  lines.push(
    `  gw: start() until cursor = last ROWID    ${bl.gw.caughtUpMs} ms   ${bl.gw.perS} msg/s (${bl.gw.stored} stored)`,
  );
  lines.push(
    `  gw: process spawn until serving          ${bl.gw.spawnToReadyMs} ms   ${bl.gw.perSFromSpawn} msg/s`,
  );
}
const idle = results.idle as Record<string, Record<string, number>> | undefined;
if (idle) {
  lines.push("");
  lines.push(`idle for ${IDLE_S} s           cpu ms   cpu %   RSS start    end     max  growth KiB`);
  for (const [name, v] of Object.entries(idle)) {
    lines.push(
      `  ${pad(name, 22)} ${String(v.cpuMs).padStart(8)} ${String(v.cpuPct).padStart(7)} ${String(v.rssStartMiB).padStart(9)} ${String(v.rssEndMiB).padStart(7)} ${String(v.rssMaxMiB).padStart(7)} ${String(v.rssGrowthKiB).padStart(11)}`,
    );
  }
}
lines.push("");
lines.push(
  `machine busy (all ${machine.cpus} cores, this bench included): ${Object.entries(machineLoad)
    .map(([k, v]) => `${k} ${v.busyPctAllCores ?? "n/a"} % (load ${v.load1Start} -> ${v.load1End})`)
    .join(", ")}`,
);
lines.push("");
lines.push("targets");
for (const v of verdicts)
  lines.push(`  ${v.pass ? "PASS" : "FAIL"}  ${v.target}: ${v.figure}  [${v.baseline}]`);
process.stdout.write(`${lines.join("\n")}\n`);
process.stdout.write(
  `${JSON.stringify({
    bench: "device",
    machine,
    config: {
      samplesOn: SAMPLES_ON,
      samplesOff: SAMPLES_OFF,
      warmup: WARMUP,
      pollMs: POLL_MS,
      stepMs: STEP_MS,
      backlog: BACKLOG,
      backlogTx: BACKLOG_TX,
      idleS: IDLE_S,
      seed: SEED,
    },
    totalS,
    sourcesChanged,
    machineLoad,
    results,
    verdicts,
  })}\n`,
);
