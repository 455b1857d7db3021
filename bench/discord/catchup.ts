/**
 * bench/discord/discord.ts's catch-up phase: a gw sees one message per channel and stops; BENCH_PER_CHANNEL
 * messages per channel go into history only; then rounds, in alternating order, of gw started again on a
 * copy of the stopped state and of the raw baseline (discord.js login, client.rest paging the same
 * channels 5 at a time, one bun:sqlite transaction per page with gw's DDL), timed until all is stored;
 * then both again with discord.js's 50 requests/s pacing lifted. Figures: medians of the rounds.
 */
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { FAKE_BOT_TOKEN } from "../../src/demo/fake-discord/server.ts";
import { Child } from "../lib/child.ts";
import { now } from "../lib/child-protocol.ts";
import type { SummaryRow } from "../lib/report.ts";
import { PATH } from "../lib/settings.ts";
import { median } from "../lib/stats.ts";
import { type DiscordRun, fakeGwEnv, messagesDdl, startFake, startGw, stopFake } from "./procs.ts";
import { CATCHUP_BOUND, CHANNELS, CONCURRENCY, HERE, PER_CHANNEL, progress, RUNS } from "./settings.ts";

export interface CatchupRun {
  kind: "gw" | "raw" | "gwUnpaced" | "rawUnpaced";
  round: number;
  /** All in ms, on this process's clock. */
  spawnToAll: number;
  /** gw: start() called → all stored; raw: before `import("discord.js")` → all stored. */
  startToAll: number;
  /** gw: connector `ok`; raw: clientReady. */
  readyToAll: number;
  /** First history request seen by the fake → all stored. */
  firstRequestToAll: number;
  /** First → last history request, as the fake saw them. */
  requestSpan: number;
  historyRequests: number;
  stored: number;
  /** Time inside the store transactions (gw: ingest calls; raw: page inserts). */
  storeMs: number;
  /** gw only: the connector's own "Discord catch-up done" log line, and bound warnings. */
  loggedMs?: number | null;
  boundWarnings?: number;
}

/** The stopped gw's state after seeing every channel once, and the history it missed meanwhile. */
async function prepareHistory(run: DiscordRun) {
  const fake = await startFake(run);
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const guild = fake.guild({ name: "bench" });
  const channels = Array.from({ length: CHANNELS }, (_, i) => fake.channel(guild.id, { name: `c${i}` }).id);
  const baseDir = join(run.root, "catchup-base");
  const first = await startGw("gw(first)", fakeGwEnv(baseDir, fake.apiUrl, ann));
  const seen = channels.map((id) => fake.message(id, { author: ann, content: `seen ${id}` }).id as string);
  const t0 = now();
  while (((await first.child.request({ cmd: "count" })).n as number) < CHANNELS) {
    if (now() - t0 > 30_000) throw new Error("gw did not see every channel");
    await Bun.sleep(10);
  }
  await first.child.stop();
  const total = CHANNELS * PER_CHANNEL;
  progress(`catchup: gw stopped; posting ${CHANNELS} × ${PER_CHANNEL} = ${total} messages into history`);
  const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split(" ");
  const tPost = now();
  for (let i = 0; i < PER_CHANNEL; i++)
    for (const id of channels)
      fake.message(id, {
        author: ann,
        content: `missed ${i} ${words.slice(0, 2 + (i % 10)).join(" ")}`,
        dispatch: false,
      });
  const postMs = now() - tPost;
  const ddl = messagesDdl(join(baseDir, "data/gw.db"));
  /** The fake's Date.now() mapped onto our clock. */
  const wallOff = Date.now() - now();
  return { run, fake, ann, channels, seen, baseDir, total, postMs, ddl, wallOff };
}

type History = Awaited<ReturnType<typeof prepareHistory>>;

/** The history requests the fake saw since request `from`: count, first and last, on our clock. */
function historyOf(h: History, from: number) {
  const reqs = h.fake.requests
    .slice(from)
    .filter((q) => q.method === "GET" && /^\/channels\/\d+\/messages$/.test(q.path));
  return {
    n: reqs.length,
    first: (reqs[0]?.at ?? Number.NaN) - h.wallOff,
    last: (reqs.at(-1)?.at ?? Number.NaN) - h.wallOff,
  };
}

/** gw started again on a copy of the stopped state, until all the history is stored. */
async function runGw(h: History, round: number, unpaced: boolean): Promise<CatchupRun> {
  const dir = join(h.run.root, `catchup-gw-${round}-${unpaced ? "unpaced" : "paced"}`);
  // The stopped gw's data only (database, attachments); its log stays behind, so the log is this run's.
  cpSync(join(h.baseDir, "data"), join(dir, "data"), { recursive: true });
  const from = h.fake.requests.length;
  const gw = await startGw(`gw(catchup ${round})`, {
    ...fakeGwEnv(dir, h.fake.apiUrl, h.ann),
    BENCH_EXPECT_STORED: String(h.total),
    ...(unpaced ? { BENCH_UNPACED: "1" } : {}),
  });
  const q = historyOf(h, from);
  const s = gw.stamps;
  const all = (s.all as number) - gw.child.offsetMs;
  const count = gw.count;
  await gw.child.stop();
  const log = readFileSync(join(dir, "logs/current.log"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const done = log.find((l) => l.msg === "Discord catch-up done" && l.session === "new");
  rmSync(dir, { recursive: true, force: true });
  return {
    kind: unpaced ? "gwUnpaced" : "gw",
    round,
    spawnToAll: all - gw.tSpawn,
    startToAll: (s.all as number) - s.start,
    readyToAll: (s.all as number) - s.ok,
    firstRequestToAll: all - q.first,
    requestSpan: q.last - q.first,
    historyRequests: q.n,
    stored: count - CHANNELS,
    storeMs: gw.ingestMs,
    loggedMs: typeof done?.ms === "number" ? done.ms : null,
    boundWarnings: log.filter((l) => String(l.msg).startsWith("catch-up bound reached")).length,
  };
}

/** The raw baseline in a fresh process: discord.js login, REST paging, one transaction per page. */
async function runRaw(h: History, round: number, unpaced: boolean): Promise<CatchupRun> {
  const dir = join(h.run.root, `catchup-raw-${round}-${unpaced ? "unpaced" : "paced"}`);
  mkdirSync(dir, { recursive: true });
  const from = h.fake.requests.length;
  const tSpawn = now();
  const child = new Child(`raw(catchup ${round})`, [join(HERE, "raw.ts"), "catchup"], {
    PATH,
    BENCH_TOKEN: FAKE_BOT_TOKEN,
    BENCH_API_URL: h.fake.apiUrl,
    BENCH_CATCHUP: JSON.stringify({
      channels: h.channels.map((c, i) => [c, h.seen[i]]),
      max: CATCHUP_BOUND,
      concurrency: CONCURRENCY,
      unpaced,
      dbPath: join(dir, "raw.db"),
      ddl: h.ddl,
    }),
  });
  const done = await child.waitFor((m) => "done" in m, 120_000, "done");
  await child.calibrate();
  const q = historyOf(h, from);
  const s = done.stamps as Record<"process" | "begin" | "imported" | "ready" | "all", number>;
  const all = s.all - child.offsetMs;
  await child.stop();
  rmSync(dir, { recursive: true, force: true });
  return {
    kind: unpaced ? "rawUnpaced" : "raw",
    round,
    spawnToAll: all - tSpawn,
    startToAll: s.all - s.begin,
    readyToAll: s.all - s.ready,
    firstRequestToAll: all - q.first,
    requestSpan: q.last - q.first,
    historyRequests: q.n,
    stored: done.rows as number,
    storeMs: done.storeMs as number,
  };
}

/** RUNS paced rounds (gw first in even ones), then RUNS unpaced rounds (raw first in even ones). */
async function allRuns(h: History): Promise<CatchupRun[]> {
  const runs: CatchupRun[] = [];
  for (let round = 0; round < RUNS; round++) {
    const order = round % 2 === 0 ? (["gw", "raw"] as const) : (["raw", "gw"] as const);
    for (const kind of order) {
      progress(`catchup: round ${round + 1}/${RUNS}, ${kind}`);
      runs.push(kind === "gw" ? await runGw(h, round, false) : await runRaw(h, round, false));
    }
  }
  for (let round = 0; round < RUNS; round++) {
    const order = round % 2 === 0 ? (["raw", "gw"] as const) : (["gw", "raw"] as const);
    for (const kind of order) {
      progress(`catchup: without discord.js's 50 requests/s pacing, round ${round + 1}/${RUNS}, ${kind}`);
      runs.push(kind === "gw" ? await runGw(h, round, true) : await runRaw(h, round, true));
    }
  }
  return runs;
}

type Key = "spawnToAll" | "startToAll" | "readyToAll" | "firstRequestToAll" | "requestSpan" | "storeMs";
const keys: Key[] = ["spawnToAll", "startToAll", "readyToAll", "firstRequestToAll", "requestSpan", "storeMs"];

/** Per kind of run, the median of each figure (lib/stats.ts), and messages per second from it. */
function catchupResult(runs: readonly CatchupRun[], total: number, postMs: number) {
  const perS = (ms: number) => Math.round(total / (ms / 1000));
  const summary = (kind: CatchupRun["kind"]) => {
    const mine = runs.filter((x) => x.kind === kind);
    const out: Record<string, unknown> = { runs: mine.length };
    for (const k of keys) out[k] = Math.round(median(mine.map((x) => x[k])));
    out.historyRequests = mine[0]?.historyRequests;
    out.storedAll = mine.every((x) => x.stored === total);
    const s = out as Record<Key, number> & { runs: number; historyRequests: number; storedAll: boolean };
    return { ...s, perSFromStart: perS(s.startToAll), perSFromFirstRequest: perS(s.firstRequestToAll) };
  };
  return {
    messages: total,
    channels: CHANNELS,
    perChannel: PER_CHANNEL,
    bound: CATCHUP_BOUND,
    postMs: Math.round(postMs),
    runs: runs.map((x) => ({
      ...x,
      ...Object.fromEntries(keys.map((k) => [k, Math.round(x[k] * 10) / 10])),
    })),
    gw: summary("gw"),
    raw: summary("raw"),
    gwUnpaced: summary("gwUnpaced"),
    rawUnpaced: summary("rawUnpaced"),
  };
}

export type CatchupResult = ReturnType<typeof catchupResult>;

function verdicts(r: CatchupResult): SummaryRow[] {
  return [
    {
      figure: `catch-up of ${r.messages} messages in ${CHANNELS} channels after downtime, from start()`,
      value: `${r.gw.startToAll} ms = ${r.gw.perSFromStart} msg/s`,
      baseline: `raw discord.js login + REST + bun:sqlite: ${r.raw.startToAll} ms = ${r.raw.perSFromStart} msg/s (both paced to Discord's 50 requests/s)`,
      ratio: Math.round((r.gw.perSFromStart / r.raw.perSFromStart) * 100) / 100,
      target: "",
      pass: r.gw.storedAll && r.raw.storedAll ? null : false,
    },
    {
      figure: "the same catch-up without the 50 requests/s pacing, from the first history request",
      value: `${r.gwUnpaced.firstRequestToAll} ms = ${r.gwUnpaced.perSFromFirstRequest} msg/s`,
      baseline: `raw ${r.rawUnpaced.firstRequestToAll} ms = ${r.rawUnpaced.perSFromFirstRequest} msg/s`,
      ratio: Math.round((r.gwUnpaced.perSFromFirstRequest / r.rawUnpaced.perSFromFirstRequest) * 100) / 100,
      target: "",
      pass: r.gwUnpaced.storedAll && r.rawUnpaced.storedAll ? null : false,
    },
  ];
}

export async function catchupPhase(
  run: DiscordRun,
): Promise<{ result: CatchupResult; verdicts: SummaryRow[] }> {
  const h = await prepareHistory(run);
  const runs = await allRuns(h);
  await stopFake(run, h.fake);
  const result = catchupResult(runs, h.total, h.postMs);
  return { result, verdicts: verdicts(result) };
}
