/**
 * Benchmark: catching up with a large iMessage backlog without blocking, next to a raw copy of the same
 * rows in the same run.
 *
 *   bun run bench/backlog/backlog.ts
 *
 * gw runs as `bun src/main.ts serve` (the real command) on a chat.db written the way Messages writes
 * it; this script is Messages and the agent. After a first start (the cursor is placed at the end), gw
 * is stopped and BENCH_BACKLOG rows are written (80 % from the allowlisted friend, 10 % from a
 * stranger, 10 % in a group). Then:
 * 1. raw: bench/backlog/raw.ts copies the same rows with gw's read query into a store with gw's schema
 *    (same inserts and index writes, BATCH_ROWS per transaction, synchronous=FULL), no gw logic; bare:
 *    bench/backlog/bare.ts stores them in a plain schema (the row and its key), the same way.
 * 2. catch-up: gw serve starts on the backlog; from its first /healthz answer until /healthz says it is
 *    up to date, this script alternates GET /healthz and GET /messages/unread?limit=20 (one agent) every
 *    BENCH_PROBE_MS and records each latency; gw's peak RSS is its /proc VmHWM at the end. Throughput
 *    counts from spawn to up to date.
 * 3. stop: BENCH_STOP_ROWS more rows; gw starts again and gets SIGTERM once a fifth of them are stored;
 *    the time to exit is taken, and gw.db must hold exactly the rows up to its cursor.
 * Environment: BENCH_BACKLOG (500000), BENCH_STOP_ROWS (100000), BENCH_PROBE_MS (10), BENCH_KEEP (0).
 * Prints a table and one JSON line on stdout (with a `summary` list), progress on stderr.
 */
import { Database } from "bun:sqlite";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { freePort, spawnGw, stopGw, waitForHealth } from "../../test/helpers/process.ts";
import {
  chatDbPathIn,
  FRIEND,
  FRIEND_CHAT,
  GW_ALLOWLIST,
  openBenchChatDb,
  STRANGER,
  STRANGER_CHAT,
} from "../lib/chatdb.ts";
import { now } from "../lib/child-protocol.ts";
import { gwEnv } from "../lib/gw-env.ts";
import { plainRow, report, type SummaryRow } from "../lib/report.ts";
import { startSession } from "../lib/session.ts";
import { intEnv, KEEP, progressLine, TOKEN } from "../lib/settings.ts";
import { dist } from "../lib/stats.ts";

const BACKLOG = intEnv("BENCH_BACKLOG", 500_000, 1);
const STOP_ROWS = intEnv("BENCH_STOP_ROWS", 100_000, 1);
const PROBE_MS = intEnv("BENCH_PROBE_MS", 10, 0);
const TARGET = { p99Ms: 50, stopMs: 2_000, perS: 30_000, ratio: 0.8, bareRatio: 0.7, rssMiB: 150 };
const GROUP_CHAT = "any;+;chat123456789";
const progress = progressLine("backlog");
const startedAt = performance.now();

const session = startSession(progress, KEEP);
const dir = session.tempDir("gw-bench-backlog-");
const chatDbPath = chatDbPathIn(dir);
writeFileSync(join(dir, "allowlist.toml"), GW_ALLOWLIST);
const port = freePort();
const env = gwEnv(dir, { GW_BIND_PORT: String(port), GW_LOG_LEVEL: "warn", GW_CHAT_DB_PATH: chatDbPath });

const base = `http://127.0.0.1:${port}`;
const headers = { authorization: `Bearer ${TOKEN}`, "x-agent-id": "bench" };
const startGw = () => {
  const gw = spawnGw(["serve"], env, { output: "ignore" });
  session.track(gw.proc);
  return gw;
};
const health = async () => {
  try {
    const r = await fetch(`${base}/healthz`);
    return (await r.json()) as { connectors: { device_messenger: { detail: string } } };
  } catch {
    return null;
  }
};
const waitHealthy = () => waitForHealth(port, 30_000, 2);
const storedCount = () => {
  const db = new Database(env.GW_DB_PATH, { readonly: true });
  try {
    const cursor = Number(
      (
        db.query("SELECT position FROM connector_cursors WHERE source = 'device_messenger'").get() as {
          position: string;
        }
      ).position,
    );
    const n = (db.query("SELECT COUNT(*) AS n FROM messages").get() as { n: number }).n;
    return { cursor, n };
  } finally {
    db.close();
  }
};
const peakRssMiB = (pid: number) => {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
};

const writer = openBenchChatDb(chatDbPath, { peerColumns: false });
writer.chat({
  guid: GROUP_CHAT,
  style: 43,
  chatIdentifier: "chat123456789",
  participants: [FRIEND, STRANGER],
});
const seed = (rows: number, offset: number) => {
  for (let done = 0; done < rows; done += 5_000)
    writer.db.transaction(() => {
      for (let i = done; i < Math.min(rows, done + 5_000); i++) {
        const text = `backlog ${offset + i} lorem ipsum dolor sit amet`;
        const k = i % 10;
        if (k === 0) writer.message({ chatGuid: STRANGER_CHAT, from: STRANGER, text });
        else if (k === 1)
          writer.message({ chatGuid: GROUP_CHAT, from: i % 20 === 1 ? FRIEND : STRANGER, text });
        else writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
      }
    })();
};

const results: Record<string, unknown> = {};
try {
  // First start: the cursor goes to the end of chat.db.
  const first = startGw();
  await waitHealthy();
  await stopGw(first);
  const from = writer.maxRowid();
  progress(`writing ${BACKLOG} rows while gw is stopped`);
  const tSeed = now();
  seed(BACKLOG, 0);
  progress(`seeded in ${((now() - tSeed) / 1000).toFixed(1)} s`);

  // The copies the catch-up is compared with, each into its own file: gw's schema, then a plain one.
  const copy = async (script: string, file: string) => {
    const child = Bun.spawn(
      [process.execPath, join(import.meta.dir, script), chatDbPath, String(from), join(dir, file)],
      { stdout: "pipe", stderr: "inherit" },
    );
    const out = JSON.parse(await new Response(child.stdout).text()) as { rows: number; ms: number };
    return { ...out, perS: Math.round(out.rows / (out.ms / 1000)) };
  };
  progress("raw copy (gw's schema)");
  const rawOut = await copy("raw.ts", "raw.db");
  const rawPerS = rawOut.perS;
  progress("bare copy (a plain schema)");
  const bareOut = await copy("bare.ts", "bare.db");

  progress("gw catch-up with /healthz and unread probed");
  const tSpawn = now();
  const proc = startGw();
  await waitHealthy();
  const firstHealthMs = now() - tSpawn;
  const healthMs: number[] = [];
  const unreadMs: number[] = [];
  let done = false;
  let upToDateAt = 0;
  while (!done) {
    const t0 = now();
    const h = await health();
    healthMs.push(now() - t0);
    if (h?.connectors.device_messenger.detail.startsWith("Up to date")) {
      done = true;
      upToDateAt = now();
      break;
    }
    const t1 = now();
    await fetch(`${base}/messages/unread?limit=20`, { headers }).then((r) => r.arrayBuffer());
    unreadMs.push(now() - t1);
    if (PROBE_MS > 0) await Bun.sleep(PROBE_MS);
  }
  const rss = peakRssMiB(proc.proc.pid);
  const caughtUp = storedCount();
  await stopGw(proc);
  const gwMs = upToDateAt - tSpawn;
  const gwPerS = Math.round(BACKLOG / (gwMs / 1000));

  progress(`stop: ${STOP_ROWS} more rows, SIGTERM once a fifth is stored`);
  const stopFrom = writer.maxRowid();
  seed(STOP_ROWS, BACKLOG);
  const before = storedCount().n;
  const proc2 = startGw();
  await waitHealthy();
  for (;;) {
    if (storedCount().n - before >= STOP_ROWS / 5) break;
    await Bun.sleep(5);
  }
  const tTerm = now();
  const code = await stopGw(proc2);
  const stopMs = now() - tTerm;
  const after = storedCount();
  const consistent = after.n - before === after.cursor - stopFrom;

  const r = {
    backlog: BACKLOG,
    gw: {
      ms: Math.round(gwMs),
      perS: gwPerS,
      firstHealthMs: Math.round(firstHealthMs),
      peakRssMiB: rss,
      stored: caughtUp.n,
    },
    raw: { ms: Math.round(rawOut.ms), perS: rawPerS, rows: rawOut.rows },
    ratio: Math.round((gwPerS / rawPerS) * 100) / 100,
    bare: { ms: Math.round(bareOut.ms), perS: bareOut.perS, rows: bareOut.rows },
    bareRatio: Math.round((gwPerS / bareOut.perS) * 100) / 100,
    healthz: dist(healthMs),
    unread: dist(unreadMs),
    stop: { ms: Math.round(stopMs), exitCode: code, consistent, storedBeforeStop: after.n - before },
  };
  results.backlog = r;
  const summary: SummaryRow[] = [
    {
      figure: "catch-up throughput",
      value: `${gwPerS} msg/s`,
      baseline: `raw copy ${rawPerS} msg/s`,
      ratio: r.ratio,
      target: `≥ ${TARGET.perS} and ≥ ${TARGET.ratio}×`,
      pass: gwPerS >= TARGET.perS && r.ratio >= TARGET.ratio,
    },
    {
      figure: "catch-up throughput vs a bare copy (plain schema: the row and its key)",
      value: `${gwPerS} msg/s`,
      baseline: `bare copy ${bareOut.perS} msg/s`,
      ratio: r.bareRatio,
      target: `≥ ${TARGET.bareRatio}×`,
      pass: r.bareRatio >= TARGET.bareRatio,
    },
    plainRow(
      "/healthz p99 during catch-up",
      `${r.healthz.p99} ms`,
      `≤ ${TARGET.p99Ms} ms`,
      r.healthz.p99 <= TARGET.p99Ms,
    ),
    plainRow(
      "unread p99 during catch-up",
      `${r.unread.p99} ms`,
      `≤ ${TARGET.p99Ms} ms`,
      r.unread.p99 <= TARGET.p99Ms,
    ),
    plainRow(
      "SIGTERM during catch-up → exit",
      `${r.stop.ms} ms (exit ${code}, cursor ${consistent ? "consistent" : "INCONSISTENT"})`,
      `≤ ${TARGET.stopMs} ms`,
      stopMs <= TARGET.stopMs && consistent && code === 0,
    ),
    plainRow("peak RSS during catch-up", `${rss} MiB`, `< ${TARGET.rssMiB} MiB`, rss < TARGET.rssMiB),
  ];
  report({
    bench: "backlog",
    command: "bun run bench backlog",
    startedAt,
    summary,
    results: r,
    lines: [
      `backlog bench: ${cpus().length} cpus, bun ${Bun.version}, ${BACKLOG} rows`,
      `  gw: ${gwMs.toFixed(0)} ms spawn → up to date (${gwPerS} msg/s); first /healthz ${firstHealthMs.toFixed(0)} ms after spawn`,
      `  raw copy: ${rawOut.ms.toFixed(0)} ms (${rawPerS} msg/s); gw/raw ${r.ratio}`,
      `  bare copy: ${bareOut.ms.toFixed(0)} ms (${bareOut.perS} msg/s); gw/bare ${r.bareRatio}`,
      `  /healthz during catch-up: n ${r.healthz.n}, p50 ${r.healthz.p50}, p99 ${r.healthz.p99}, max ${r.healthz.max} ms`,
      `  unread during catch-up:   n ${r.unread.n}, p50 ${r.unread.p50}, p99 ${r.unread.p99}, max ${r.unread.max} ms`,
    ],
  });
} finally {
  writer.close();
  session.cleanup();
}
