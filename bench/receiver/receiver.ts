/**
 * Benchmark: `gw receiver` from webhook arrival to agent start, next to a raw `Bun.spawn` of the same
 * agent in the same run.
 *
 *   bun run bench/receiver/receiver.ts
 *
 * gw receiver runs from source in its own process (as `bun src/main.ts receiver`), with a minimal
 * agent: a shell script that appends `date +%s%N` (wall clock, ns) to a file and exits. Per sample this
 * script POSTs one delivery signed as gw serve signs it (each sample in a new channel, after the
 * previous run ended, so nothing queues) and records when the 204 arrived and when the agent stamped.
 * Baseline: this process spawns the same script directly (`Bun.spawn`, stdin piped and closed, as the
 * receiver does) and takes the stamp minus the spawn call. Both clocks are this machine's wall clock.
 * Environment: BENCH_SAMPLES (200), BENCH_WARMUP (10). Prints a table and one JSON line on stdout.
 */
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { signedHeaders } from "../../src/webhooks/sign.ts";
import { envelopeOf } from "../../test/helpers/envelope.ts";
import { freePort, spawnGw, waitForHealth } from "../../test/helpers/process.ts";
import { now } from "../lib/child-protocol.ts";
import { distTable, report } from "../lib/report.ts";
import { startSession } from "../lib/session.ts";
import { commonEnv, KEEP, PATH, progressLine, SECRET, TOKEN } from "../lib/settings.ts";
import { dist } from "../lib/stats.ts";

const startedAt = performance.now();
const { SAMPLES, WARMUP } = commonEnv({ SAMPLES: 200, WARMUP: 10 });
const session = startSession(progressLine("receiver"), KEEP);
const dir = session.tempDir("gw-bench-receiver-");
const stamps = join(dir, "stamps");
const agent = join(dir, "agent");
writeFileSync(agent, `#!/bin/sh\ndate +%s%N >> '${stamps}'\ncat > /dev/null\n`);
chmodSync(agent, 0o755);
writeFileSync(stamps, "");
const stampCount = () => readFileSync(stamps, "utf8").split("\n").filter(Boolean).length;
const lastStamp = () => Number(readFileSync(stamps, "utf8").trim().split("\n").at(-1)) / 1e6;
const waitStamps = async (n: number) => {
  const deadline = now() + 10_000;
  while (stampCount() < n) {
    if (now() > deadline) throw new Error(`the agent did not run (${stampCount()} of ${n})`);
    await Bun.sleep(0.2);
  }
};

const port = freePort();
const receiver = spawnGw(
  ["receiver"],
  {
    PATH,
    HOME: dir,
    GW_BEARER_TOKEN: TOKEN,
    GW_WEBHOOK_SECRET: SECRET,
    GW_LOG_DIR: join(dir, "logs"),
    GW_LOG_LEVEL: "warn",
    GW_RECEIVER_BIND_PORT: String(port),
    GW_RECEIVER_AGENT_BIN: agent,
  },
  { output: "inherit" },
);
session.track(receiver.proc);

try {
  await waitForHealth(port, 15_000, 20);
  const answered: number[] = [];
  const started: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const id = crypto.randomUUID();
    const body = JSON.stringify(
      envelopeOf({
        id: `msg_01J${String(i).padStart(23, "0")}`,
        channel_id: `community_chat:channel:${1_300_000_000_000_000_000 + i}`,
        sender: { id: "1", display_name: "Ann", person_id: "ann" },
      }),
    );
    const headers = signedHeaders(SECRET, id, Math.floor(Date.now() / 1000), body);
    const t0 = now();
    const res = await fetch(`http://127.0.0.1:${port}/webhook`, {
      method: "POST",
      headers: { ...headers },
      body,
    });
    const t1 = now();
    if (res.status !== 204) throw new Error(`delivery answered ${res.status}: ${await res.text()}`);
    await waitStamps(i + 1);
    if (i >= WARMUP) {
      answered.push(t1 - t0);
      started.push(lastStamp() - t0);
    }
    await Bun.sleep(5);
  }
  const raw: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const before = stampCount();
    const t0 = now();
    const p = Bun.spawn([agent], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "" },
    });
    p.stdin.end();
    await p.exited;
    await waitStamps(before + 1);
    if (i >= WARMUP) raw.push(lastStamp() - t0);
  }
  const r = { answered: dist(answered), agentStart: dist(started), rawSpawnToStart: dist(raw) };
  report({
    bench: "receiver",
    command: "bun run bench receiver",
    startedAt,
    summary: [
      {
        figure: "webhook POST → the agent's first instruction, p50 (p99)",
        value: `${r.agentStart.p50} (${r.agentStart.p99}) ms`,
        baseline: `raw Bun.spawn of the same agent: ${r.rawSpawnToStart.p50} (${r.rawSpawnToStart.p99}) ms`,
        ratio: null,
        target: "",
        pass: null,
      },
      {
        figure: "webhook POST → 204 received, p50 (p99)",
        value: `${r.answered.p50} (${r.answered.p99}) ms`,
        baseline: "",
        ratio: null,
        target: "",
        pass: null,
      },
    ],
    results: r,
    lines: [
      `receiver bench: bun ${Bun.version}, ${SAMPLES} samples`,
      "",
      ...distTable(
        "(ms)",
        ["n", "p50", "p90", "p99", "max"],
        [
          ["webhook POST -> 204 received", r.answered],
          ["webhook POST -> agent's first instruction", r.agentStart],
          ["raw Bun.spawn -> agent's first instruction", r.rawSpawnToStart],
        ],
      ),
      `  gw's own share of the start (p50): ${(r.agentStart.p50 - r.rawSpawnToStart.p50).toFixed(2)} ms`,
    ],
  });
} finally {
  session.cleanup();
}
