/**
 * Benchmark: the Discord (community-chat) connector end to end, each figure next to a raw discord.js
 * baseline measured in the same run, against the fake Discord of the tests (real gateway and REST
 * protocols, test/fakes/fake-discord) on 127.0.0.1.
 *
 *   bun run bench/community.ts
 *
 * Processes: this script hosts the fake Discord and plays the agent (it polls GET /messages/unread).
 * gw runs in its own process (bench/community-gw.ts, built as `gw serve` builds it, production connector
 * settings), the raw discord.js client in another (bench/community-raw.ts), and the webhook sink in a
 * third (bench/webhooks-sink.ts), so no two share an event loop.
 *
 * 1. latency: gw and the raw client are logged in to the same fake as the same bot (two sessions, as
 *    two instances of a bot on Discord; the fake serves them in rotating order). Per sample: stamp,
 *    post one MESSAGE_CREATE from an allowlisted user, then GET /messages/unread every BENCH_STEP_MS
 *    until it is listed, mark it read, wait 20–120 ms (seeded). Figures per sample, from the post: the
 *    raw client's `messageCreate` event; gw's ingest commit (stamped inside gw); listed in unread; the
 *    signed webhook received by the sink. BENCH_SAMPLES samples after BENCH_WARMUP untimed ones.
 * 2. catchup: a fresh gw sees one message in each of BENCH_CHANNELS channels, stops; BENCH_PER_CHANNEL
 *    messages per channel are posted while it is down; gw starts again and is timed from start() (and
 *    from its session being ready) until all are stored. Baseline in the same run: discord.js's REST
 *    client paging the same channels after the same ids (5 channels at a time) into a bare bun:sqlite
 *    table, one transaction per page; once paced to Discord's 50 requests/s as discord.js does by
 *    default (and gw with it), once without that pacing (the fetch + store floor a fake allows).
 *
 * Every process stamps `performance.timeOrigin + performance.now()`; child clock offsets are measured
 * with 25 pings (min round trip) and subtracted. Prints a table and one JSON line on stdout, progress
 * on stderr. Environment: BENCH_SAMPLES (500), BENCH_WARMUP (20), BENCH_STEP_MS (1), BENCH_CHANNELS
 * (50), BENCH_PER_CHANNEL (200), BENCH_PHASES (latency,catchup), BENCH_SEED (1), BENCH_KEEP (0).
 * Write-up: bench/community-results.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_BOT_TOKEN, type FakeUser, startFakeDiscord } from "../test/fakes/fake-discord/server.ts";
import { now } from "./device-child.ts";
import { Child, live } from "./lib/child.ts";
import { type Dist, dist, intEnv, mulberry32 } from "./lib/stats.ts";

const SAMPLES = intEnv("BENCH_SAMPLES", 500, 1);
const WARMUP = intEnv("BENCH_WARMUP", 20, 0);
const STEP_MS = intEnv("BENCH_STEP_MS", 1, 0);
const CHANNELS = intEnv("BENCH_CHANNELS", 50, 1);
const PER_CHANNEL = intEnv("BENCH_PER_CHANNEL", 200, 1);
const SEED = intEnv("BENCH_SEED", 1, 0);
const KEEP = intEnv("BENCH_KEEP", 0, 0) === 1;
const PHASES = new Set((process.env.BENCH_PHASES ?? "latency,catchup").split(",").map((s) => s.trim()));
/** The target: gw's p50 (listed in unread) within this of the raw client's event p50. */
const TARGET_P50_GAP_MS = 5;
const SECRET = `bench-secret-${crypto.randomUUID()}`;
const TOKEN = `bench-${crypto.randomUUID()}`;
const AGENT = "bench-agent";
const HERE = import.meta.dir;
const random = mulberry32(SEED);
const progress = (s: string) => process.stderr.write(`[community] ${s}\n`);

const root = mkdtempSync(join(tmpdir(), "gw-bench-community-"));
let cleaned = false;
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const c of live) c.proc.kill();
  if (KEEP) progress(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
}
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });

function gwEnv(dir: string, apiUrl: string, ann: FakeUser, extra: Record<string, string> = {}) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "allowlist.toml"),
    `[[entry]]\nsource = "community_chat"\nid = "${ann.id}"\nperson_id = "ann"\n`,
  );
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    GW_BEARER_TOKEN: TOKEN,
    GW_BIND_HOST: "127.0.0.1",
    GW_DB_PATH: join(dir, "data/gw.db"),
    GW_ATTACHMENT_DIR: join(dir, "data/attachments"),
    GW_LOG_DIR: join(dir, "logs"),
    GW_ALLOWLIST_PATH: join(dir, "allowlist.toml"),
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: apiUrl,
    ...extra,
  };
}

async function startChild(name: string, args: string[], env: Record<string, string>) {
  const child = new Child(name, args, env);
  const ready = await child.waitFor((m) => "ready" in m, 120_000, "ready");
  await child.calibrate();
  return { child, ready };
}

/** The sink's clock minus ours, from the /now ping with the smallest round trip. */
async function sinkOffset(port: number): Promise<number> {
  let best = { rtt: Number.POSITIVE_INFINITY, off: 0 };
  for (let i = 0; i < 25; i++) {
    const t1 = now();
    const { t } = (await (await fetch(`http://127.0.0.1:${port}/now`)).json()) as { t: number };
    const t2 = now();
    if (t2 - t1 < best.rtt) best = { rtt: t2 - t1, off: t - (t1 + t2) / 2 };
  }
  return best.off;
}

const results: Record<string, unknown> = {};
const verdicts: { target: string; figure: string; baseline: string; pass: boolean }[] = [];

// ---------------------------------------------------------------------------------------------------
// 1. Latency: MESSAGE_CREATE → raw event / gw commit / listed in unread / webhook received

async function latencyPhase() {
  const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const guild = fake.guild({ name: "bench" });
  const channel = fake.channel(guild.id, { name: "general" });

  const sinkProc = new Child("sink", [join(HERE, "webhooks-sink.ts")], {
    PATH: process.env.PATH ?? "",
    BENCH_SECRET: SECRET,
  });
  const sinkPort = (await sinkProc.waitFor((m) => "ready" in m, 30_000, "sink ready")).ready as number;
  const sinkOff = await sinkOffset(sinkPort);
  const gw = await startChild(
    "gw",
    [join(HERE, "community-gw.ts")],
    gwEnv(join(root, "latency"), fake.apiUrl, ann, {
      GW_WEBHOOK_URL: `http://127.0.0.1:${sinkPort}/webhook`,
      GW_WEBHOOK_SECRET: SECRET,
      BENCH_TRACE_INGEST: "1",
    }),
  );
  const raw = await startChild("raw", [join(HERE, "community-raw.ts"), "client"], {
    PATH: process.env.PATH ?? "",
    BENCH_TOKEN: FAKE_BOT_TOKEN,
    BENCH_API_URL: fake.apiUrl,
  });
  const base = `http://127.0.0.1:${gw.ready.ready}`;
  const headers = { authorization: `Bearer ${TOKEN}`, "x-agent-id": AGENT };

  const posted = new Map<string, number>();
  const visible = new Map<string, number>();
  let polls = 0;
  const t0 = now();
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const text = `${i < WARMUP ? "warm" : "s"}-${i}`;
    const tPost = now();
    fake.message(channel.id, { author: ann, content: text });
    posted.set(text, tPost);
    for (;;) {
      polls += 1;
      const res = await fetch(`${base}/messages/unread?limit=20`, { headers });
      const tAnswer = now();
      const { messages } = (await res.json()) as { messages: { id: string; text: string }[] };
      if (messages.some((m) => m.text === text)) {
        visible.set(text, tAnswer);
        await fetch(`${base}/messages/mark_read`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: JSON.stringify({ message_ids: messages.map((m) => m.id) }),
        });
        break;
      }
      if (now() - tPost > 5_000) throw new Error(`message ${text} not listed after 5 s`);
      if (STEP_MS > 0) await Bun.sleep(STEP_MS);
    }
    await Bun.sleep(20 + random() * 100);
  }
  const wallS = (now() - t0) / 1000;
  progress(`latency: ${SAMPLES} samples in ${wallS.toFixed(1)} s; collecting`);
  // Webhooks may trail the last sample by a few ms.
  const deadline = now() + 10_000;
  let sink: { n: number; dupes: number; bad: number; records: [string, number, number][] };
  for (;;) {
    sink = (await (await fetch(`http://127.0.0.1:${sinkPort}/stats`)).json()) as typeof sink;
    if (sink.n >= WARMUP + SAMPLES || now() > deadline) break;
    await Bun.sleep(20);
  }
  const deliveries = (await gw.child.request({ cmd: "deliveries" })).rows as {
    delivery: string;
    text: string;
  }[];
  const textOf = new Map(deliveries.map((d) => [d.delivery, d.text]));

  const sampled = [...posted.keys()].filter((t) => t.startsWith("s-"));
  const since = (stamps: Map<string, number>) =>
    sampled.flatMap((t) => (stamps.has(t) ? [(stamps.get(t) as number) - (posted.get(t) as number)] : []));
  const stampsOf = (child: Child, key: string) => {
    const out = new Map<string, number>();
    for (const m of child.msgs) {
      const v = m[key];
      const at = (m.t as number) - child.offsetMs;
      if (typeof v === "string") out.set(v, at);
      else if (Array.isArray(v)) for (const x of v) out.set(String(x), at);
    }
    return out;
  };
  const webhook = new Map<string, number>();
  for (const [id, t] of sink.records) {
    const text = textOf.get(id);
    if (text) webhook.set(text, t - sinkOff);
  }
  const r = {
    rawEvent: dist(since(stampsOf(raw.child, "event"))),
    gwCommit: dist(since(stampsOf(gw.child, "ingested"))),
    gwUnread: dist(since(visible)),
    gwWebhook: dist(since(webhook)),
    polls: polls,
    webhooks: { received: sink.n, dupes: sink.dupes, badSignatures: sink.bad },
    offsets: { gw: gw.child.offsetMs, raw: raw.child.offsetMs, sink: sinkOff },
    wallS: Math.round(wallS * 10) / 10,
  };
  results.latency = r;
  const gap = r.gwUnread.p50 - r.rawEvent.p50;
  verdicts.push({
    target: `MESSAGE_CREATE -> unread: p50 within ${TARGET_P50_GAP_MS} ms of raw discord.js`,
    figure: `gw unread p50 ${r.gwUnread.p50} ms (commit ${r.gwCommit.p50}, webhook ${r.gwWebhook.p50}); gap ${gap.toFixed(2)} ms`,
    baseline: `raw messageCreate p50 ${r.rawEvent.p50} ms`,
    pass: gap <= TARGET_P50_GAP_MS,
  });
  for (const c of [gw.child, raw.child, sinkProc]) await c.stop();
  await fake.stop();
}

// ---------------------------------------------------------------------------------------------------
// 2. Catch-up after downtime

async function catchupPhase() {
  const fake = await startFakeDiscord({ heartbeatIntervalMs: 41_250 });
  const ann = fake.user({ username: "ann", global_name: "Ann" });
  const guild = fake.guild({ name: "bench" });
  const channels = Array.from({ length: CHANNELS }, (_, i) => fake.channel(guild.id, { name: `c${i}` }).id);
  const env = gwEnv(join(root, "catchup"), fake.apiUrl, ann);
  const first = await startChild("gw(first)", [join(HERE, "community-gw.ts")], env);
  const seen = channels.map((id) => fake.message(id, { author: ann, content: `seen ${id}` }).id as string);
  const t0 = now();
  while (((await first.child.request({ cmd: "count" })).n as number) < CHANNELS) {
    if (now() - t0 > 30_000) throw new Error("gw did not see every channel");
    await Bun.sleep(10);
  }
  await first.child.stop();
  progress(`catchup: gw stopped; posting ${CHANNELS} × ${PER_CHANNEL} messages`);
  const words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split(" ");
  for (let i = 0; i < PER_CHANNEL; i++)
    for (const id of channels)
      fake.message(id, {
        author: ann,
        content: `missed ${i} ${words.slice(0, 2 + (i % 10)).join(" ")}`,
        dispatch: false,
      });
  const total = CHANNELS * PER_CHANNEL;

  progress("catchup: starting gw on the same files");
  const tSpawn = now();
  const second = await startChild("gw(second)", [join(HERE, "community-gw.ts")], {
    ...env,
    BENCH_EXPECT_COUNT: String(CHANNELS + total),
    GW_COMMUNITY_CATCHUP_MAX_MESSAGES: String(PER_CHANNEL),
  });
  const spawnToAllMs = now() - tSpawn;
  await second.child.stop();

  progress("catchup: raw discord.js REST + bun:sqlite baseline");
  const rest = await startChild("raw(rest)", [join(HERE, "community-raw.ts"), "rest"], {
    PATH: process.env.PATH ?? "",
    BENCH_TOKEN: FAKE_BOT_TOKEN,
    BENCH_API_URL: fake.apiUrl,
  });
  const rawRun = async (unlimited: boolean) => {
    const runs: { n: number; ms: number }[] = [];
    for (let run = 0; run < 3; run++) {
      const r = await rest.child.request(
        { cmd: "catchup", channels: channels.map((c, i) => [c, seen[i]]), max: PER_CHANNEL, unlimited },
        120_000,
      );
      runs.push({ n: r.n as number, ms: r.ms as number });
    }
    const medianMs = [...runs.map((x) => x.ms)].sort((a, b) => a - b)[1] as number;
    return {
      runsMs: runs.map((x) => Math.round(x.ms)),
      medianMs: Math.round(medianMs),
      perS: Math.round(total / (medianMs / 1000)),
      n: runs[0]?.n,
    };
  };
  const raw = await rawRun(false);
  const rawUnpaced = await rawRun(true);
  await rest.child.stop();
  await fake.stop();

  const caughtUpMs = second.ready.caughtUpMs as number;
  const connectedMs = second.ready.connectedMs as number;
  const r = {
    messages: total,
    channels: CHANNELS,
    gw: {
      startToAllStoredMs: Math.round(caughtUpMs),
      perS: Math.round(total / (caughtUpMs / 1000)),
      connectedMs: Math.round(connectedMs),
      readyToAllStoredMs: Math.round(caughtUpMs - connectedMs),
      perSFromReady: Math.round(total / ((caughtUpMs - connectedMs) / 1000)),
      spawnToAllStoredMs: Math.round(spawnToAllMs),
      stored: (second.ready.count as number) - CHANNELS,
    },
    raw,
    rawUnpaced,
  };
  results.catchup = r;
  verdicts.push({
    target: "catch-up after downtime (reported, no target)",
    figure: `${r.gw.perSFromReady} msg/s from ready (${total} in ${r.gw.readyToAllStoredMs} ms; start() → all stored ${r.gw.startToAllStoredMs} ms incl. login ${r.gw.connectedMs} ms)`,
    baseline: `raw REST + sqlite ${r.raw.perS} msg/s (gw ${(r.gw.perSFromReady / r.raw.perS).toFixed(2)}×); without discord.js's 50 req/s pacing ${r.rawUnpaced.perS} msg/s`,
    pass: r.gw.stored === total,
  });
}

// ---------------------------------------------------------------------------------------------------

const tMain = now();
try {
  if (PHASES.has("latency")) await latencyPhase();
  if (PHASES.has("catchup")) await catchupPhase();
} finally {
  cleanup();
}
const machine = {
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "?",
  bun: Bun.version,
  totalS: Math.round((now() - tMain) / 100) / 10,
};
const lines: string[] = [
  `community-chat bench: ${machine.cpus} cpus (${machine.cpuModel}), bun ${machine.bun}, ${machine.totalS} s`,
];
const row = (label: string, d: Dist) =>
  `  ${label.padEnd(40)} ${String(d.n).padStart(5)} ${[d.p50, d.p90, d.p99, d.max].map((x) => String(x).padStart(8)).join("")}`;
const lat = results.latency as Record<string, Dist> | undefined;
if (lat) {
  lines.push("", `MESSAGE_CREATE posted -> (ms)                  n      p50     p90     p99     max`);
  lines.push(row("raw discord.js messageCreate", lat.rawEvent as Dist));
  lines.push(row("gw ingest committed (in gw)", lat.gwCommit as Dist));
  lines.push(row("gw listed in GET /messages/unread", lat.gwUnread as Dist));
  lines.push(row("gw signed webhook received", lat.gwWebhook as Dist));
}
lines.push("", "targets");
for (const v of verdicts)
  lines.push(`  ${v.pass ? "PASS" : "FAIL"}  ${v.target}: ${v.figure}  [${v.baseline}]`);
process.stdout.write(`${lines.join("\n")}\n`);
process.stdout.write(`${JSON.stringify({ bench: "community", machine, results, verdicts })}\n`);
