/**
 * Benchmark: the HTTP API's hot read, `GET /messages/unread?limit=20`, against a bare Bun.serve baseline
 * doing the same work; plus how the store's unread query grows with the number of stored messages.
 *
 *   bun run bench/api.ts
 *
 * 1. Seeds a real WAL database (openStore) in a temp directory with BENCH_ROWS messages (default
 *    100,000) and gives agent-0 … agent-9 varied read state (bulk read marks + store.reads.rebuildRuns).
 * 2. Runs two servers from bench/api-server.ts, each in its own process and one at a time: `gateway`
 *    (createService + app.listen, as `gw serve`) and `raw` (Bun.serve + store.reads.unread + envelopeJson).
 *    Before loading them it checks that both give the same JSON for every agent.
 * 3. Loads each with wrk (BENCH_CONNECTIONS connections, BENCH_THREADS threads, X-Agent-ID rotating over
 *    the 10 agents): an untimed warm-up, then a timed run. BENCH_ROUNDS rounds, in ABBA order. Without
 *    wrk (or with BENCH_LOADGEN=bun) the load comes from bench/api-load.ts in its own process instead.
 *    Then one supplementary round with agent-0 (nothing read) only, where the store's work is small
 *    (BENCH_LIGHT=0 skips it).
 * 4. Times store.reads.unread(agent, limit 20) in-process, interleaved across databases, for three read
 *    layouts at BENCH_GROWTH_SMALL (10,000), BENCH_ROWS and BENCH_GROWTH_LARGE (1,000,000) stored
 *    messages (BENCH_GROWTH=0 skips the large one), and prints the large/small ratio.
 * Prints a table, then one JSON line; progress goes to stderr. Method and figures: bench/README.md.
 *
 * Environment: BENCH_ROWS (100000), BENCH_CONNECTIONS (32), BENCH_THREADS (2), BENCH_DURATION_S (20),
 * BENCH_WARMUP_S (3), BENCH_ROUNDS (2), BENCH_LOADGEN (wrk|bun, default wrk when installed),
 * BENCH_LIGHT (1), BENCH_GROWTH (1), BENCH_GROWTH_SMALL (10000), BENCH_GROWTH_LARGE (1000000),
 * BENCH_GROWTH_ITERS (1000), BENCH_SEED (1), BENCH_QUIET_WAIT_S (30: before each timed run, wait up to
 * this long for the machine to be under 10% busy), BENCH_MAX_OTHER_PCT (15: a timed run during which
 * other processes used more than this share of the CPUs is repeated, twice at most), BENCH_KEEP (1 keeps
 * the temp directory, for poking at the database afterwards).
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { type AllowlistEntry, buildAllowlist } from "../src/allowlist/parse.ts";
import type { AllowlistStatus, ChannelType, Direction, Source } from "../src/core/envelope.ts";
import { createIdFactory } from "../src/core/ids.ts";
import { toEnvelope } from "../src/store/envelope.ts";
import type { MessageRow } from "../src/store/messages.ts";
import { openStore } from "../src/store/store.ts";
import { freePort } from "../test/helpers/process.ts";
import { machineProcessMs, waitQuiet } from "./lib/machine.ts";
import { procCpuMs } from "./lib/proc.ts";
import { report, type SummaryRow } from "./lib/report.ts";
import { intEnv, mulberry32, percentile } from "./lib/stats.ts";

// ---------------------------------------------------------------------------------------------------
// Configuration

const ROWS = intEnv("BENCH_ROWS", 100_000, 5_000);
const CONNECTIONS = intEnv("BENCH_CONNECTIONS", 32, 1);
const THREADS = Math.min(CONNECTIONS, intEnv("BENCH_THREADS", 2, 1));
const DURATION_S = intEnv("BENCH_DURATION_S", 20, 1);
const WARMUP_S = intEnv("BENCH_WARMUP_S", 3, 0);
const ROUNDS = intEnv("BENCH_ROUNDS", 2, 1);
const GROWTH = intEnv("BENCH_GROWTH", 1, 0) === 1;
/** A second, supplementary mix: agent-0 (nothing read) only, one round. */
const LIGHT = intEnv("BENCH_LIGHT", 1, 0) === 1;
const GROWTH_SMALL = intEnv("BENCH_GROWTH_SMALL", 10_000, 5_000);
const GROWTH_LARGE = intEnv("BENCH_GROWTH_LARGE", 1_000_000, 5_000);
const GROWTH_ITERS = intEnv("BENCH_GROWTH_ITERS", 1_000, 10);
const SEED = intEnv("BENCH_SEED", 1, 0);
const QUIET_WAIT_S = intEnv("BENCH_QUIET_WAIT_S", 30, 0);
/** A timed run during which other processes used more than this share of the CPUs is repeated. */
const MAX_OTHER = intEnv("BENCH_MAX_OTHER_PCT", 15, 0) / 100;
/** gw's requests per second relative to the bare server doing the same store calls (issue: performance). */
const TARGET_RATIO = 0.85;
const WRK = Bun.which("wrk");
const LOADGEN: "wrk" | "bun" =
  process.env.BENCH_LOADGEN === "bun" || (process.env.BENCH_LOADGEN !== "wrk" && !WRK) ? "bun" : "wrk";
if (LOADGEN === "wrk" && !WRK) throw new Error("BENCH_LOADGEN=wrk but wrk is not on PATH");

const LIMIT = 20;
const PATH = `/messages/unread?limit=${LIMIT}`;
const TOKEN = `bench-${crypto.randomUUID()}`;
const AGENTS = Array.from({ length: 10 }, (_, i) => `agent-${i}`);
/** The agents timed by the growth measurement (present in every seeded database). */
const GROWTH_AGENTS = ["agent-0", "agent-2", "agent-3"] as const;
const CHANNELS = 50;
const START_MS = Date.UTC(2024, 0, 1);
const SPAN_MS = 2 * 365 * 86_400_000;
const CHUNK = 50_000;

// ---------------------------------------------------------------------------------------------------
// Deterministic data

const WORDS =
  "ok yes no maybe later tonight tomorrow dinner meeting call back see you soon thanks great sounds good where are we the a on at is it running late almost there can you send me file link photo address when what why how love this lol nice".split(
    " ",
  );

interface Channel {
  id: string;
  source: Source;
  type: ChannelType;
  platformRef: string;
}

interface Person {
  id: string;
  name: string;
}

/** Channels, people and the allowlist: the same for every database of a run. */
function buildWorld() {
  const channels: Channel[] = Array.from({ length: CHANNELS }, (_, i): Channel => {
    if (i < 30) {
      const group = i % 4 === 0;
      const id = group ? `chat${100_000_000 + i * 7919}` : `+1555${String(1_000_000 + i * 3571).slice(-7)}`;
      return {
        id,
        source: "device_messenger",
        type: group ? "group" : "dm",
        platformRef: `iMessage;${group ? "+" : "-"};${id}`,
      };
    }
    const id = String(1_100_000_000_000_000_000n + BigInt(i) * 4_194_304_017n);
    return { id, source: "community_chat", type: i % 5 === 0 ? "dm" : "group", platformRef: id };
  });
  // Zipf-like traffic (s = 0.8): a few busy channels, a long tail.
  const cumulative: number[] = [];
  let total = 0;
  for (let i = 0; i < CHANNELS; i++) {
    total += 1 / (i + 1) ** 0.8;
    cumulative.push(total);
  }
  const people = (source: Source, n: number, known: boolean): Person[] =>
    Array.from({ length: n }, (_, i) =>
      source === "device_messenger"
        ? { id: `+1666${String((known ? 2_000_000 : 5_000_000) + i * 7).slice(-7)}`, name: `Person ${i}` }
        : {
            id: String(900_000_000_000_000_000n + BigInt((known ? 0 : 1_000_000) + i) * 65_537n),
            name: `${known ? "member" : "visitor"}${i}`,
          },
    );
  const known = {
    device_messenger: people("device_messenger", 60, true),
    community_chat: people("community_chat", 60, true),
  };
  const strangers = {
    device_messenger: people("device_messenger", 200, false),
    community_chat: people("community_chat", 200, false),
  };
  // Every person_id is used by several entries, so the gateway logs no single-use warnings.
  const entries: AllowlistEntry[] = (["device_messenger", "community_chat"] as const).flatMap((source) =>
    known[source].map((p, i) => ({
      source,
      id: p.id,
      person_id: `person-${i % 30}`,
      display_name: i % 3 === 0 ? null : `Friend ${i}`,
    })),
  );
  const toml = entries
    .map(
      (e) =>
        `[[entry]]\nsource = "${e.source}"\nid = "${e.id}"\nperson_id = "${e.person_id}"\n` +
        (e.display_name ? `display_name = "${e.display_name}"\n` : ""),
    )
    .join("\n");
  return { channels, cumulative, total, known, strangers, allowlist: buildAllowlist(entries), toml };
}

type World = ReturnType<typeof buildWorld>;

/** Which allowed messages an agent has read, by position in (message_ts, id) order. */
interface Layout {
  agent: string;
  describe: string;
  read(pos: number, allowedCount: number, source: Source): boolean;
}

function layouts(rng: () => number, allowedCount: number): Layout[] {
  const randomSet = (k: number): Set<number> => {
    const s = new Set<number>();
    while (s.size < Math.min(k, allowedCount)) s.add(Math.floor(rng() * allowedCount));
    return s;
  };
  const scattered1000 = randomSet(1000);
  const scattered100 = randomSet(100);
  const coin50 = Uint8Array.from({ length: allowedCount }, () => (rng() < 0.5 ? 1 : 0));
  const coin90 = Uint8Array.from({ length: allowedCount }, () => (rng() < 0.9 ? 1 : 0));
  return [
    { agent: "agent-0", describe: "nothing read", read: () => false },
    { agent: "agent-1", describe: "everything read (caught up)", read: () => true },
    { agent: "agent-2", describe: "all read but the newest 1,000", read: (p, n) => p < n - 1000 },
    { agent: "agent-3", describe: "all read but 1,000 at random", read: (p) => !scattered1000.has(p) },
    { agent: "agent-4", describe: "all read but 100 at random", read: (p) => !scattered100.has(p) },
    { agent: "agent-5", describe: "50% read at random", read: (p) => coin50[p] === 1 },
    { agent: "agent-6", describe: "90% read at random", read: (p) => coin90[p] === 1 },
    {
      agent: "agent-7",
      describe: "all read but 1 stale (at 1%) + the newest 200",
      read: (p, n) => p !== Math.floor(n * 0.01) && p < n - 200,
    },
    {
      agent: "agent-8",
      describe: "community_chat read, device_messenger unread",
      read: (_p, _n, source) => source === "community_chat",
    },
    { agent: "agent-9", describe: "the oldest half read", read: (p, n) => p < n / 2 },
  ];
}

interface Seeded {
  rows: number;
  allowed: number;
  unknown: number;
  outbound: number;
  attachments: number;
  marks: Record<string, number>;
  runs: Record<string, number>;
  describe: Record<string, string>;
  dbBytes: number;
  seedMs: number;
}

/**
 * Seeds `path` with `rows` messages (store.messages.insert, CHUNK per transaction; 3% carry an
 * attachment record) and the read state of the agents in `only` (all when null), then closes the store.
 */
function seedDb(path: string, rows: number, world: World, only: readonly string[] | null): Seeded {
  const t0 = performance.now();
  const rng = mulberry32(SEED);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)] as T;
  const store = openStore(path);
  store.db.run("PRAGMA cache_size = -262144");
  let now = START_MS;
  const ids = createIdFactory({ now: () => now });
  const gap = SPAN_MS / rows;
  const allIds: string[] = new Array(rows);
  const ts = new Float64Array(rows);
  const sourceOf: Source[] = new Array(rows);
  const allowedIdx: number[] = [];
  const counts = { allowed: 0, unknown: 0, outbound: 0, attachments: 0 };
  const lastInChannel: (string | undefined)[] = new Array(CHANNELS);
  const lastInbound = new Float64Array(CHANNELS);

  for (let start = 0; start < rows; start += CHUNK) {
    const end = Math.min(rows, start + CHUNK);
    store.db
      .transaction(() => {
        for (let i = start; i < end; i++) {
          const r = rng() * world.total;
          let c = 0;
          while (c < CHANNELS - 1 && (world.cumulative[c] ?? 0) < r) c++;
          const channel = world.channels[c] as Channel;
          const createdAt = Math.round(START_MS + (i + 0.5) * gap);
          now = createdAt;
          const messageTs = createdAt - Math.floor(rng() * Math.max(2, 2 * gap));
          const roll = rng();
          const direction: Direction = roll < 0.05 ? "outbound" : "inbound";
          const sender: Person =
            direction === "outbound"
              ? { id: "owner", name: "Me" }
              : roll < 0.85
                ? pick(world.known[channel.source])
                : pick(world.strangers[channel.source]);
          const entry = direction === "inbound" ? world.allowlist.lookup(channel.source, sender.id) : null;
          const status: AllowlistStatus =
            direction === "outbound" ? "outbound" : entry ? "allowed" : "unknown";
          const words = 2 + Math.floor(rng() * 24);
          let text = pick(WORDS);
          for (let w = 1; w < words; w++) text += ` ${pick(WORDS)}`;
          const id = ids.message();
          const row: MessageRow = {
            id,
            source: channel.source,
            platform_id:
              channel.source === "device_messenger"
                ? crypto.randomUUID().toUpperCase()
                : ((BigInt(createdAt - 1_420_070_400_000) << 22n) | BigInt(i & 0x3fffff)).toString(),
            channel_id: channel.id,
            channel_type: channel.type,
            sender_id: sender.id,
            sender_name: entry?.display_name ?? sender.name,
            person_id: entry?.person_id ?? null,
            text,
            reply_to: rng() < 0.05 ? (lastInChannel[c] ?? null) : null,
            message_ts: messageTs,
            direction,
            allowlist_status: status,
            raw: JSON.stringify(
              channel.source === "device_messenger"
                ? { ROWID: i + 1, service: "iMessage", is_from_me: direction === "outbound" ? 1 : 0 }
                : { guild_id: "1100000000000000000", channel_id: channel.id, type: 0 },
            ),
            created_at: createdAt,
          };
          store.messages.insert(row);
          if (rng() < 0.03) {
            store.attachments.insert({
              id: ids.attachment(),
              message_id: id,
              mime: "image/jpeg",
              size_bytes: 20_000 + Math.floor(rng() * 2_000_000),
              file_name: null,
              platform_ref: `att-${i}`,
              created_at: createdAt,
            });
            counts.attachments++;
          }
          allIds[i] = id;
          ts[i] = messageTs;
          sourceOf[i] = channel.source;
          counts[status]++;
          if (status === "allowed") allowedIdx.push(i);
          lastInChannel[c] = id;
          if (direction === "inbound") lastInbound[c] = createdAt;
        }
      })
      .immediate();
  }
  store.db
    .transaction(() => {
      world.channels.forEach((ch, c) => {
        const at = lastInbound[c] ?? 0;
        if (at > 0) store.channels.observeInbound({ ...ch }, at);
      });
    })
    .immediate();

  // Read state: raw read marks, then the store's own rebuildRuns derives each agent's read runs.
  const byTs = allowedIdx.sort((a, b) => {
    const d = (ts[a] ?? 0) - (ts[b] ?? 0);
    return d !== 0 ? d : (allIds[a] as string) < (allIds[b] as string) ? -1 : 1;
  });
  const n = byTs.length;
  const mark = store.db.prepare<unknown, [string, string, number]>(
    "INSERT INTO read_marks (message_id, agent_id, read_at) VALUES (?1, ?2, ?3)",
  );
  const marks: Record<string, number> = {};
  const describe: Record<string, string> = {};
  for (const layout of layouts(rng, n)) {
    if (only && !only.includes(layout.agent)) continue;
    describe[layout.agent] = layout.describe;
    let k = 0;
    for (let start = 0; start < n; start += CHUNK) {
      store.db
        .transaction(() => {
          for (let p = start; p < Math.min(n, start + CHUNK); p++) {
            const i = byTs[p] as number;
            if (!layout.read(p, n, sourceOf[i] as Source)) continue;
            mark.run(allIds[i] as string, layout.agent, now + 60_000);
            k++;
          }
        })
        .immediate();
    }
    marks[layout.agent] = k;
    store.reads.rebuildRuns(layout.agent);
  }
  mark.finalize();
  const runs = Object.fromEntries(
    store.db
      .prepare<{ agent_id: string; n: number }, []>(
        "SELECT agent_id, count(*) AS n FROM read_runs GROUP BY 1",
      )
      .all()
      .map((r) => [r.agent_id, r.n]),
  ) as Record<string, number>;
  store.close();
  return {
    rows,
    ...counts,
    marks,
    runs,
    describe,
    dbBytes: statSync(path).size,
    seedMs: Math.round(performance.now() - t0),
  };
}

// ---------------------------------------------------------------------------------------------------
// Servers and load

type Target = "gateway" | "raw";

interface Server {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  stderr: () => string;
}

const children = new Set<Subprocess>();

async function startServer(target: Target, dir: string, baseUrl: string): Promise<Server> {
  const port = freePort();
  const proc = Bun.spawn(
    [process.execPath, join(import.meta.dir, "api-server.ts"), target, dir, String(port)],
    {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: dir,
        BENCH_TOKEN: TOKEN,
        BENCH_BASE_URL: baseUrl,
      },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  children.add(proc);
  let err = "";
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of proc.stderr) err += decoder.decode(chunk, { stream: true });
  })();
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 30_000;
  while (!out.includes("ready ")) {
    const chunk = await Promise.race([
      reader.read(),
      Bun.sleep(Math.max(0, deadline - Date.now())).then(() => null),
    ]);
    if (chunk === null || chunk.done) throw new Error(`${target} server did not start:\n${out}${err}`);
    out += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  return { proc, port, stderr: () => err };
}

async function stopServer(s: Server): Promise<void> {
  s.proc.kill("SIGTERM");
  const code = await s.proc.exited;
  children.delete(s.proc);
  if (code !== 0) throw new Error(`server exited with ${code}:\n${s.stderr()}`);
}

async function getUnread(port: number, agent: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${port}${PATH}`, {
    headers: { authorization: `Bearer ${TOKEN}`, "x-agent-id": agent },
  });
  if (res.status !== 200) throw new Error(`GET ${PATH} as ${agent}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A request mix: which agents the X-Agent-ID header rotates over. */
interface Mix {
  name: string;
  agents: readonly string[];
  rounds: number;
  script: string;
}

interface Load {
  /** CPU time the load generator used (from its rusage), ms. */
  loadgenCpuMs: number | null;
  requests: number;
  seconds: number;
  non2xx: number;
  errors: number;
  bytes: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

function wrkScript(dir: string, name: string, agents: readonly string[]): string {
  const path = join(dir, `${name}.lua`);
  writeFileSync(
    path,
    `-- X-Agent-ID rotates over the agents, one per request (each wrk thread has its own counter).
local agents = { ${agents.map((a) => `"${a}"`).join(", ")} }
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", nil, { ["Authorization"] = "Bearer ${TOKEN}", ["X-Agent-ID"] = agents[(n % #agents) + 1] })
end
`,
  );
  return path;
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const UNIT_BYTES: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

function parseWrk(out: string): Omit<Load, "loadgenCpuMs"> {
  const ms = (label: string): number => {
    const m = new RegExp(`^\\s*${label}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, "m").exec(out);
    if (!m) throw new Error(`wrk output has no ${label}% line:\n${out}`);
    return Number(m[1]) * (UNIT_MS[m[2] as string] ?? Number.NaN);
  };
  const total = /(\d+) requests in ([\d.]+)(us|ms|s|m|h), ([\d.]+)(B|KB|MB|GB|TB) read/.exec(out);
  const max = /^\s*Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s|m|h)/m.exec(out);
  if (!total || !max) throw new Error(`cannot parse wrk output:\n${out}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    requests: Number(total[1]),
    seconds: (Number(total[2]) * (UNIT_MS[total[3] as string] ?? Number.NaN)) / 1000,
    bytes: Number(total[4]) * (UNIT_BYTES[total[5] as string] ?? Number.NaN),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0),
    errors: socket ? socket.slice(1).reduce((s, x) => s + Number(x), 0) : 0,
    p50: ms("50"),
    p90: ms("90"),
    p99: ms("99"),
    max: Number(max[1]) * (UNIT_MS[max[2] as string] ?? Number.NaN),
  };
}

async function runLoad(port: number, seconds: number, mix: Mix): Promise<Load> {
  const url = `http://127.0.0.1:${port}${PATH}`;
  const cmd =
    LOADGEN === "wrk"
      ? [WRK as string, "-t", String(THREADS), "-c", String(CONNECTIONS), "-d", `${seconds}s`].concat([
          "--latency",
          "--timeout",
          "5s",
          "-s",
          mix.script,
          url,
        ])
      : [
          process.execPath,
          join(import.meta.dir, "api-load.ts"),
          JSON.stringify({ url, connections: CONNECTIONS, seconds, token: TOKEN, agents: mix.agents }),
        ];
  const proc = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  children.add(proc);
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  children.delete(proc);
  if (code !== 0) throw new Error(`load generator exited with ${code}: ${err}${out}`);
  const usage = proc.resourceUsage();
  const loadgenCpuMs = usage ? Number(usage.cpuTime.total) / 1000 : null;
  if (LOADGEN === "wrk") return { loadgenCpuMs, ...parseWrk(out) };
  const j = JSON.parse(out) as Record<string, number>;
  return {
    loadgenCpuMs,
    requests: j.requests ?? 0,
    seconds: j.seconds ?? 0,
    non2xx: j.non2xx ?? 0,
    errors: j.errors ?? 0,
    bytes: j.bytes ?? 0,
    p50: j.p50_ms ?? Number.NaN,
    p90: j.p90_ms ?? Number.NaN,
    p99: j.p99_ms ?? Number.NaN,
    max: j.max_ms ?? Number.NaN,
  };
}

interface RunResult extends Load {
  mix: string;
  target: Target;
  round: number;
  rps: number;
  serverCpuMs: number | null;
  /** Share of the machine's CPU used by processes other than the server and the load generator. */
  otherCpuShare: number | null;
  /** 1, or more when the run was repeated because other processes were busy. */
  attempts: number;
}

interface Summary {
  rps: number;
  /** Mean of the runs' p50. */
  p50: number;
  /** Worst of the runs' p99. */
  p99: number;
  bytesPerRequest: number;
  cpuUsPerRequest: number | null;
  failures: number;
}

function summarize(runs: readonly RunResult[], mix: string, target: Target): Summary {
  const rs = runs.filter((r) => r.mix === mix && r.target === target);
  const requests = rs.reduce((s, r) => s + r.requests, 0);
  const cpu = rs.every((r) => r.serverCpuMs !== null)
    ? rs.reduce((s, r) => s + (r.serverCpuMs ?? 0), 0)
    : null;
  return {
    rps: requests / rs.reduce((s, r) => s + r.seconds, 0),
    p50: rs.reduce((s, r) => s + r.p50, 0) / rs.length,
    p99: Math.max(...rs.map((r) => r.p99)),
    bytesPerRequest: rs.reduce((s, r) => s + r.bytes, 0) / requests,
    cpuUsPerRequest: cpu === null ? null : (cpu * 1000) / requests,
    failures: rs.reduce((s, r) => s + r.non2xx + r.errors, 0),
  };
}

/** One timed load run: a fresh server process, an untimed warm-up, the timed run, then stop. */
async function loadRun(
  target: Target,
  dir: string,
  baseUrl: string,
  mix: Mix,
  round: number,
): Promise<RunResult> {
  await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const server = await startServer(target, dir, baseUrl);
  if (WARMUP_S > 0) await runLoad(server.port, WARMUP_S, mix);
  const busy0 = machineProcessMs();
  const cpu0 = procCpuMs(server.proc.pid)?.self ?? null;
  const load = await runLoad(server.port, DURATION_S, mix);
  const cpu1 = procCpuMs(server.proc.pid)?.self ?? null;
  const busy1 = machineProcessMs();
  await stopServer(server);
  const serverCpuMs = cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null;
  const r: RunResult = {
    mix: mix.name,
    target,
    round,
    ...load,
    rps: load.requests / load.seconds,
    serverCpuMs,
    otherCpuShare:
      busy0 !== null && busy1 !== null && serverCpuMs !== null && load.loadgenCpuMs !== null
        ? Math.max(0, busy1 - busy0 - serverCpuMs - load.loadgenCpuMs) /
          (load.seconds * 1000 * navigator.hardwareConcurrency)
        : null,
    attempts: 1,
  };
  progress(
    `  ${mix.name}, round ${round}, ${target}: ${fmt(r.rps)} req/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms` +
      (r.non2xx + r.errors > 0 ? `, ${r.non2xx} non-2xx, ${r.errors} socket errors` : "") +
      (r.otherCpuShare === null ? "" : `, other processes ${fmt(r.otherCpuShare * 100)}% of the CPUs`),
  );
  return r;
}

// ---------------------------------------------------------------------------------------------------
// Growth: store-level unread time against the number of stored messages

interface Timing {
  p50: number;
  p99: number;
  mean: number;
  rows: number;
}

const BLOCKS = 10;

/**
 * Times store.reads.unread(agent, limit 20) on several databases, each on its own connection opened
 * with openStore, interleaved: BLOCKS blocks, each running every (database, agent) pair for
 * GROWTH_ITERS / BLOCKS calls, so that drift in the machine's speed hits every size alike.
 */
function measureUnread(dbs: readonly { rows: number; path: string; agents: readonly string[] }[]) {
  const f = { source: null, channelId: null, sinceMs: null, limit: LIMIT };
  const opened = dbs.map((d) => ({ ...d, store: openStore(d.path) }));
  const samples = new Map<string, number[]>();
  const rowsSeen = new Map<string, number>();
  const per = Math.max(1, Math.round(GROWTH_ITERS / BLOCKS));
  try {
    for (const d of opened)
      for (const a of d.agents) for (let i = 0; i < per; i++) d.store.reads.unread(a, f);
    for (let b = 0; b < BLOCKS; b++) {
      const order = b % 2 === 0 ? opened : [...opened].reverse();
      for (const d of order) {
        for (const a of d.agents) {
          const key = `${d.rows}\u0000${a}`;
          const xs = samples.get(key) ?? [];
          samples.set(key, xs);
          for (let i = 0; i < per; i++) {
            const t0 = Bun.nanoseconds();
            const n = d.store.reads.unread(a, f).length;
            xs.push((Bun.nanoseconds() - t0) / 1000);
            rowsSeen.set(key, (rowsSeen.get(key) ?? 0) + n);
          }
        }
      }
    }
  } finally {
    for (const d of opened) d.store.close();
  }
  const out = new Map<number, Record<string, Timing>>();
  for (const d of dbs) {
    const timings: Record<string, Timing> = {};
    for (const a of d.agents) {
      const key = `${d.rows}\u0000${a}`;
      const xs = Float64Array.from(samples.get(key) ?? []).sort();
      timings[a] = {
        p50: percentile(xs, 50),
        p99: percentile(xs, 99),
        mean: xs.reduce((s, x) => s + x, 0) / xs.length,
        rows: (rowsSeen.get(key) ?? 0) / xs.length,
      };
    }
    out.set(d.rows, timings);
  }
  return out;
}

/**
 * Where one agent-0 page goes, in-process on its own connection (median of `iters` timed runs of each
 * step): the unread walk, the one attachment query per page the route makes, and toEnvelope plus
 * JSON.stringify of the page.
 */
function pageBreakdown(path: string, agent: string, iters: number) {
  const store = openStore(path);
  try {
    const f = { source: null, channelId: null, sinceMs: null, limit: LIMIT };
    const rows = store.reads.unread(agent, f);
    const byId = store.attachments.forMessages(rows.map((r) => r.id));
    const atts = rows.map((r) => byId.get(r.id) ?? []);
    const median = (fn: () => unknown): number => {
      for (let i = 0; i < Math.max(10, iters / 10); i++) fn();
      const xs = new Float64Array(iters);
      for (let i = 0; i < iters; i++) {
        const t0 = Bun.nanoseconds();
        fn();
        xs[i] = (Bun.nanoseconds() - t0) / 1000;
      }
      return percentile(xs.sort(), 50);
    };
    return {
      unreadUs: median(() => store.reads.unread(agent, f)),
      attachmentsUs: median(() => store.attachments.forMessages(rows.map((r) => r.id))),
      envelopeJsonUs: median(() =>
        JSON.stringify({
          messages: rows.map((r, i) => toEnvelope(r, atts[i] ?? [], "http://127.0.0.1:1")),
          next_since: "",
        }),
      ),
    };
  } finally {
    store.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// Main

const fmt = (n: number | null | undefined, digits = 2): string => {
  if (n === null || n === undefined || !Number.isFinite(n)) return "-";
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString("en-US");
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(digits);
};

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c] ?? 0) : cell.padStart(widths[c] ?? 0)))
      .join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

const progress = (s: string) => process.stderr.write(`${s}\n`);
const round1 = (n: number | null) => (n === null ? null : Number(n.toFixed(n >= 100 ? 0 : 2)));

async function run(dir: string): Promise<void> {
  const tTotal = performance.now();
  const world = buildWorld();
  mkdirSync(join(dir, "data"), { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, "allowlist.toml"), world.toml);
  const dbPath = join(dir, "data/gw.db");

  progress(`seeding ${ROWS.toLocaleString("en-US")} messages and 10 agents' read state into ${dbPath}`);
  const seeded = seedDb(dbPath, ROWS, world, null);
  progress(`  ${seeded.seedMs} ms, db ${(seeded.dbBytes / 2 ** 20).toFixed(0)} MiB`);

  // ---- Both servers must give the same answer to every agent ----
  const gatewayAnswers = new Map<string, unknown>();
  const rowsPerAgent: Record<string, number> = {};
  const gw = await startServer("gateway", dir, "");
  const gatewayPort = gw.port;
  for (const a of AGENTS) {
    const body = (await getUnread(gw.port, a)) as { messages: unknown[] };
    gatewayAnswers.set(a, body);
    rowsPerAgent[a] = body.messages.length;
  }
  await stopServer(gw);
  // The raw server builds attachment URLs from the base the gateway derives from its bind address.
  const baseUrl = `http://127.0.0.1:${gatewayPort}`;
  const rawServer = await startServer("raw", dir, baseUrl);
  for (const a of AGENTS) {
    if (!Bun.deepEquals(await getUnread(rawServer.port, a), gatewayAnswers.get(a))) {
      throw new Error(`the raw and gateway answers differ for ${a}`);
    }
  }
  await stopServer(rawServer);
  progress(`answers identical for all 10 agents; rows ${JSON.stringify(rowsPerAgent)}`);

  // ---- Load: one server at a time, ABBA order ----
  const mixes: Mix[] = [
    { name: "10 agents", agents: AGENTS, rounds: ROUNDS, script: "" },
    ...(LIGHT ? [{ name: "agent-0 only", agents: ["agent-0"], rounds: ROUNDS, script: "" }] : []),
  ].map((m, i) => ({ ...m, script: wrkScript(dir, `mix${i}`, m.agents) }));
  const runs: RunResult[] = [];
  progress("load");
  for (const mix of mixes) {
    for (let round = 1; round <= mix.rounds; round++) {
      const order: Target[] = round % 2 === 1 ? ["raw", "gateway"] : ["gateway", "raw"];
      for (const target of order) {
        // A run during which other processes took a noticeable share of the CPUs is repeated (twice at most).
        let r = await loadRun(target, dir, baseUrl, mix, round);
        for (let retry = 0; retry < 2 && r.otherCpuShare !== null && r.otherCpuShare > MAX_OTHER; retry++) {
          progress("  repeating that run: other processes were busy");
          r = await loadRun(target, dir, baseUrl, mix, round);
          r.attempts = retry + 2;
        }
        runs.push(r);
      }
    }
  }
  const main = mixes[0] as Mix;
  const gateway = summarize(runs, main.name, "gateway");
  const raw = summarize(runs, main.name, "raw");
  const ratio = gateway.rps / raw.rps;
  const light = LIGHT
    ? { gateway: summarize(runs, "agent-0 only", "gateway"), raw: summarize(runs, "agent-0 only", "raw") }
    : null;

  // ---- Growth ----
  const dbs = [{ rows: ROWS, path: dbPath, agents: AGENTS as readonly string[] }];
  const seeds: Record<number, { seedMs: number; dbBytes: number }> = {
    [ROWS]: { seedMs: seeded.seedMs, dbBytes: seeded.dbBytes },
  };
  for (const rows of [GROWTH_SMALL, ...(GROWTH ? [GROWTH_LARGE] : [])]) {
    if (rows === ROWS) continue;
    const path = join(dir, `growth-${rows}`, "gw.db");
    progress(`growth: seeding ${rows.toLocaleString("en-US")} messages`);
    const s = seedDb(path, rows, world, GROWTH_AGENTS);
    progress(`  ${s.seedMs} ms, db ${(s.dbBytes / 2 ** 20).toFixed(0)} MiB`);
    seeds[rows] = { seedMs: s.seedMs, dbBytes: s.dbBytes };
    dbs.push({ rows, path, agents: GROWTH_AGENTS });
  }
  dbs.sort((a, b) => a.rows - b.rows);
  progress(`growth: timing store.reads.unread, ${GROWTH_ITERS} calls per database and agent, interleaved`);
  await waitQuiet(QUIET_WAIT_S, (s) => progress(`  ${s}`));
  const timings = measureUnread(dbs);
  const page = pageBreakdown(dbPath, "agent-0", GROWTH_ITERS);
  for (const d of dbs)
    if (d.rows !== ROWS) rmSync(join(dir, `growth-${d.rows}`), { recursive: true, force: true });
  const small = timings.get(GROWTH_SMALL);
  const large = GROWTH ? timings.get(GROWTH_LARGE) : undefined;
  const growthRatios: Record<string, { p50: number; p99: number } | null> = {};
  for (const a of GROWTH_AGENTS) {
    const s = small?.[a];
    const l = large?.[a];
    growthRatios[a] = s && l ? { p50: l.p50 / s.p50, p99: l.p99 / s.p99 } : null;
  }
  const atRows = timings.get(ROWS) ?? {};
  const storeMeanUs = AGENTS.reduce((sum, a) => sum + (atRows[a]?.mean ?? Number.NaN), 0) / AGENTS.length;

  // ---- Report ----
  const worstGrowth = Math.max(...GROWTH_AGENTS.map((a) => growthRatios[a]?.p50 ?? Number.NaN));
  const lightRatio = light ? light.gateway.rps / light.raw.rps : null;
  const verdicts = {
    throughput: { ratio, target: TARGET_RATIO, pass: ratio >= TARGET_RATIO },
    lightThroughput: {
      ratio: lightRatio,
      target: TARGET_RATIO,
      pass: lightRatio === null ? null : lightRatio >= TARGET_RATIO,
    },
    growth: large
      ? { worst_p50_ratio: worstGrowth, target: 2, pass: worstGrowth <= 2 }
      : { worst_p50_ratio: null, target: 2, pass: null },
  };
  const probe = openStore(dbPath);
  const sqlite = (probe.db.prepare("select sqlite_version() AS v").get() as { v: string }).v;
  probe.close();
  const loadgen =
    LOADGEN === "wrk"
      ? (Bun.spawnSync([WRK as string, "--version"])
          .stdout.toString()
          .split(" [")[0] ?? "wrk")
      : "bun client (bench/api-load.ts)";
  const nproc = navigator.hardwareConcurrency;
  const cpu = cpus()[0]?.model ?? "unknown";

  const out: string[] = [];
  out.push(
    `gw api benchmark — bun ${Bun.version}, sqlite ${sqlite}, ${nproc} CPUs (${cpu}); load: ${loadgen}`,
  );
  out.push(
    `rows ${ROWS} (allowed ${seeded.allowed}, unknown ${seeded.unknown}, outbound ${seeded.outbound}; ` +
      `${seeded.attachments} attachments); ${CHANNELS} channels; db ${(seeded.dbBytes / 2 ** 20).toFixed(0)} MiB; seed ${seeded.seedMs} ms`,
  );
  out.push(
    `load: GET ${PATH}, ${CONNECTIONS} connections, ${THREADS} threads, ${WARMUP_S} s warm-up + ${DURATION_S} s ` +
      `per run, one server process at a time, ABBA order`,
  );
  out.push("");
  out.push(
    ...table(
      ["agent", "read state", "marks", "runs", "rows", "unread() p50 us", "mean us"],
      AGENTS.map((a) => [
        a,
        seeded.describe[a] ?? "",
        String(seeded.marks[a] ?? 0),
        String(seeded.runs[a] ?? 0),
        String(rowsPerAgent[a] ?? 0),
        fmt(atRows[a]?.p50),
        fmt(atRows[a]?.mean),
      ]),
    ),
  );
  out.push(
    `store.reads.unread alone, mean over the 10 agents: ${fmt(storeMeanUs)} us ` +
      `(server CPU per request: gateway ${fmt(gateway.cpuUsPerRequest)} us, raw ${fmt(raw.cpuUsPerRequest)} us)`,
  );
  out.push(
    `one agent-0 page in-process: unread ${fmt(page.unreadUs)} us + the page's attachment query ${fmt(page.attachmentsUs)} us ` +
      `+ toEnvelope and JSON.stringify ${fmt(page.envelopeJsonUs)} us` +
      (light
        ? ` (server CPU per request, agent-0 only: gateway ${fmt(light.gateway.cpuUsPerRequest)} us, raw ${fmt(light.raw.cpuUsPerRequest)} us)`
        : ""),
  );
  out.push("");
  const summaryRow = (mix: string, target: Target, s: Summary) => [
    `${mix}: all ${target}`,
    fmt(s.rps),
    fmt(s.p50),
    "",
    fmt(s.p99),
    "",
    fmt(s.bytesPerRequest),
    fmt(s.cpuUsPerRequest),
    String(s.failures),
    "",
  ];
  out.push(
    ...table(
      [
        "run",
        "req/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "bytes/req",
        "srv CPU us/req",
        "failed",
        "other CPU %",
      ],
      [
        ...runs.map((r) => [
          `${r.mix}: round ${r.round} ${r.target}${r.attempts > 1 ? ` (attempt ${r.attempts})` : ""}`,
          fmt(r.rps),
          fmt(r.p50),
          fmt(r.p90),
          fmt(r.p99),
          fmt(r.max),
          fmt(r.bytes / r.requests),
          r.serverCpuMs === null ? "-" : fmt((r.serverCpuMs * 1000) / r.requests),
          String(r.non2xx + r.errors),
          r.otherCpuShare === null ? "-" : fmt(r.otherCpuShare * 100, 1),
        ]),
        summaryRow(main.name, "gateway", gateway),
        summaryRow(main.name, "raw", raw),
        ...(light
          ? [
              summaryRow("agent-0 only", "gateway", light.gateway),
              summaryRow("agent-0 only", "raw", light.raw),
            ]
          : []),
      ],
    ),
  );
  out.push(
    "(summary rows: requests / seconds over the runs, mean of the runs' p50, worst of their p99; " +
      "other CPU: processes other than the server and the load generator, as a share of all CPUs)",
  );
  out.push("");
  out.push(
    ...table(
      ["unread(agent, limit 20), in-process", ...dbs.map((d) => `${d.rows} p50 / p99 us`), "ratio p50 / p99"],
      GROWTH_AGENTS.map((a) => [
        `${a} (${seeded.describe[a]})`,
        ...dbs.map((d) => `${fmt(timings.get(d.rows)?.[a]?.p50)} / ${fmt(timings.get(d.rows)?.[a]?.p99)}`),
        growthRatios[a] ? `${fmt(growthRatios[a]?.p50)} / ${fmt(growthRatios[a]?.p99)}` : "-",
      ]),
    ),
  );
  out.push("");
  const rps = (x: { rps: number; p99: number }) => `${fmt(x.rps)} req/s, p99 ${fmt(x.p99)} ms`;
  const summary: SummaryRow[] = [
    ...(light
      ? [
          {
            figure: `unread, one agent (nothing read), ${CONNECTIONS} connections`,
            value: rps(light.gateway),
            baseline: `bare Bun.serve, same store calls and JSON: ${rps(light.raw)}`,
            ratio: Math.round((lightRatio ?? 0) * 100) / 100,
            target: `≥ ${TARGET_RATIO}× raw req/s`,
            pass: verdicts.lightThroughput.pass,
          },
        ]
      : []),
    {
      figure: `unread, 10 agents with heavier read layouts, ${CONNECTIONS} connections`,
      value: rps(gateway),
      baseline: `bare Bun.serve: ${rps(raw)}`,
      ratio: Math.round(ratio * 100) / 100,
      target: `≥ ${TARGET_RATIO}× raw req/s`,
      pass: verdicts.throughput.pass,
    },
    {
      figure: `unread time growth ${GROWTH_SMALL.toLocaleString("en-US")} → ${GROWTH_LARGE.toLocaleString("en-US")} messages (worst p50 ratio)`,
      value:
        verdicts.growth.worst_p50_ratio === null ? "skipped" : `${fmt(verdicts.growth.worst_p50_ratio)}×`,
      baseline: "",
      ratio: null,
      target: "≤ 2×",
      pass: verdicts.growth.pass,
    },
  ];
  out.push(`total ${Math.round((performance.now() - tTotal) / 1000)} s`);
  report({
    bench: "api",
    command: "bun run bench api",
    startedAt: tTotal,
    summary,
    lines: out,
    results: {
      loadgen,
      rows: ROWS,
      counts: {
        allowed: seeded.allowed,
        unknown: seeded.unknown,
        outbound: seeded.outbound,
        attachments: seeded.attachments,
      },
      dbBytes: seeded.dbBytes,
      seedMs: seeded.seedMs,
      connections: CONNECTIONS,
      threads: THREADS,
      durationS: DURATION_S,
      warmupS: WARMUP_S,
      rounds: ROUNDS,
      agents: AGENTS.map((a) => ({
        agent: a,
        read: seeded.describe[a],
        marks: seeded.marks[a] ?? 0,
        runs: seeded.runs[a] ?? 0,
        rows: rowsPerAgent[a],
        unread_p50_us: round1(atRows[a]?.p50 ?? null),
        unread_mean_us: round1(atRows[a]?.mean ?? null),
      })),
      storeUnreadMeanUs: round1(storeMeanUs),
      agent0Page: {
        unread_us: round1(page.unreadUs),
        attachments_us: round1(page.attachmentsUs),
        envelope_json_us: round1(page.envelopeJsonUs),
      },
      runs: runs.map((r) => ({
        mix: r.mix,
        target: r.target,
        round: r.round,
        requests: r.requests,
        seconds: r.seconds,
        rps: Math.round(r.rps),
        p50_ms: r.p50,
        p90_ms: r.p90,
        p99_ms: r.p99,
        max_ms: r.max,
        bytes_per_request: Math.round(r.bytes / r.requests),
        server_cpu_us_per_request:
          r.serverCpuMs === null ? null : Math.round((r.serverCpuMs * 1000) / r.requests),
        failed: r.non2xx + r.errors,
        loadgen_cpu_ms: r.loadgenCpuMs === null ? null : Math.round(r.loadgenCpuMs),
        other_cpu_share: r.otherCpuShare === null ? null : Number(r.otherCpuShare.toFixed(3)),
        attempts: r.attempts,
      })),
      gateway,
      raw,
      light,
      growth: dbs.map((d) => ({
        rows: d.rows,
        seedMs: seeds[d.rows]?.seedMs,
        dbBytes: seeds[d.rows]?.dbBytes,
        unread_us: Object.fromEntries(
          GROWTH_AGENTS.map((a) => {
            const t = timings.get(d.rows)?.[a];
            return [a, t ? { p50: round1(t.p50), p99: round1(t.p99), rows: t.rows } : null];
          }),
        ),
      })),
      growthRatios,
      verdicts,
    },
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-api-"));
  const cleanup = () => {
    for (const c of children) c.kill("SIGKILL");
    if (process.env.BENCH_KEEP === "1") progress(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  try {
    await run(dir);
  } finally {
    cleanup();
  }
}

await main();
