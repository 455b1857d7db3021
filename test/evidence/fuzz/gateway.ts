/**
 * Malformed gateway frames from the fake Discord (src/demo/fake-discord: `dispatch` for sequenced
 * dispatches, `sendRaw` for anything else) reaching the service as `gw serve` wires it (real discord.js,
 * the real Discord connector, store and API). Tried: MESSAGE_CREATE/UPDATE/DELETE, CHANNEL_CREATE,
 * THREAD_CREATE, GUILD_CREATE and unknown events whose payloads miss fields, have the wrong types,
 * invalid snowflakes, hostile attachments, replies to nowhere, unknown channels and guilds, deep nesting
 * or huge content; raw frames with unknown op codes, op 0 without t, sequences going backwards or not
 * numbers, non-JSON, empty, binary, 1–8 MiB, nested 10k–200k deep. After every batch a friend and a
 * stranger post real messages. Must hold: no unhandled rejection or exception and no error logged,
 * /healthz 200, each real message stored exactly once (the friend's unread, the stranger's
 * quarantined), and every message stored from a hostile frame carries that frame's own data (nothing
 * invented or coerced). One item does it against a real `gw serve` process, which must stay up and exit
 * 0 on SIGTERM. The fake beats at Discord's 41.25 s (see ZOMBIE_RACES). Not tried: op 9, op 10 or
 * READY without their `d` (see NOT_TRIED). No bun:test hooks: the caller runs an item and everything
 * it starts is closed in it (a service stop past STOP_DEADLINE_MS is a failure).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { formatProblems, loadConfig } from "../../../src/config/load.ts";
import type { HostInfo } from "../../../src/config/paths.ts";
import { snowflakeTime } from "../../../src/connectors/community-chat/snowflake.ts";
import { buildConnectors } from "../../../src/connectors/registry.ts";
import { systemClock } from "../../../src/core/ports.ts";
import { bunSpawner } from "../../../src/core/spawn.ts";
import {
  FAKE_BOT_TOKEN,
  type FakeDiscord,
  type FakeUser,
  startFakeDiscord,
} from "../../../src/demo/fake-discord/server.ts";
import { createService, type Service } from "../../../src/service.ts";
import { recordingLogger } from "../../helpers/logger.ts";
import { isolatedEnv, waitFor } from "../../helpers/process.ts";
import { entry, startGw, workDir } from "../faults/harness.ts";
import { nastyString } from "./arbitraries.ts";
import type { FuzzItem, Outcome } from "./types.ts";

type Json = Record<string, unknown>;
const AGENT = "fuzz-gateway-agent";
const DISCORD_EPOCH = 1_420_070_400_000n;
/** Mutation values that stand for "remove the field" and "an id gw has stored". */
const ABSENT = "$ABSENT";
const STORED_ID = "$STORED_ID";
const MIB = 1 << 20;

// --- the service under test: in this process, or a real `gw serve` -----------------------------

interface StoredRow {
  id: string;
  platform_id: string;
  channel_id: string;
  sender_id: string;
  sender_name: string;
  text: string;
  status: string;
  text_type: string;
  name_type: string;
  attachments: number;
}

const ROWS_SQL = `SELECT m.id, m.platform_id, m.channel_id, m.sender_id, m.sender_name, m.text,
  m.allowlist_status AS status, typeof(m.text) AS text_type, typeof(m.sender_name) AS name_type,
  (SELECT COUNT(*) FROM attachments a WHERE a.message_id = m.id) AS attachments
  FROM messages m WHERE m.source = 'community_chat' AND m.id > ? ORDER BY m.id`;
const COUNT_SQL = "SELECT COUNT(*) AS n FROM messages WHERE source = 'community_chat' AND platform_id = ?";

interface Target {
  api(method: "GET" | "POST", path: string, body?: unknown): Promise<{ status: number; body: Json }>;
  rowsAfter(id: string): StoredRow[];
  count(platformId: string): number;
  /** Unhandled rejections/exceptions, error-level log lines, a dead process: empty while all is well. */
  problems(): string[];
  /** Stops it; what went wrong while stopping, if anything. */
  close(): Promise<string[]>;
}

const TUNING = {
  restTimeoutMs: 1_000,
  restRetries: 1,
  throttleIdentify: false,
  loginRetryMs: [200],
  stopDrainMs: 2_000,
  downloadTimeoutMs: 2_000,
};

const describeError = (e: unknown) => (e instanceof Error ? (e.stack ?? e.message) : String(e)).slice(0, 800);

/** A service stop taking longer is a failure, not a hung run (one never ended once, at scale 30). */
const STOP_DEADLINE_MS = 20_000;
const settlesWithin = (p: Promise<unknown>, ms: number) =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);

async function inProcess(fake: FakeDiscord, allowlist: string): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "gw-fuzz-gateway-"));
  const seen: string[] = [];
  const onRejection = (e: unknown) => void seen.push(`unhandled rejection: ${describeError(e)}`);
  const onException = (e: unknown) => void seen.push(`uncaught exception: ${describeError(e)}`);
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  const env: Record<string, string> = {
    ...isolatedEnv(dir),
    GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN,
    GW_COMMUNITY_API_URL: fake.apiUrl,
  };
  const auth = { authorization: `Bearer ${env.GW_BEARER_TOKEN}`, "x-agent-id": AGENT };
  const log = recordingLogger();
  let svc: Service | null = null;
  const close = async () => {
    const stopped = svc === null || (await settlesWithin(svc.close(), STOP_DEADLINE_MS));
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
    rmSync(dir, { recursive: true, force: true });
    return stopped ? [] : [`the service did not finish stopping within ${STOP_DEADLINE_MS} ms`];
  };
  try {
    writeFileSync(env.GW_ALLOWLIST_PATH as string, allowlist);
    const host: HostInfo = { platform: "linux", homeDir: dir, cwd: dir };
    const loaded = loadConfig(env, host);
    if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
    const deps = { config: loaded.config, env, host, clock: systemClock, log, spawner: bunSpawner };
    svc = createService({ ...deps, connectors: buildConnectors({ ...deps, communityTuning: TUNING }) });
    await svc.start();
  } catch (err) {
    await close();
    throw err;
  }
  const service = svc;
  return {
    api: async (method, path, body) => {
      const res = await service.app.handle(
        new Request(`http://localhost${path}`, {
          method,
          headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
      return { status: res.status, body: (await res.json()) as Json };
    },
    rowsAfter: (id) => service.store.db.query<StoredRow, [string]>(ROWS_SQL).all(id),
    count: (id) => (service.store.db.query(COUNT_SQL).get(id) as { n: number }).n,
    problems: () => [
      ...seen,
      ...log.entries
        .filter((e) => e.level === "error")
        .map((e) => `error logged: ${e.msg} ${JSON.stringify(e.obj).slice(0, 300)}`),
    ],
    close,
  };
}

async function subprocess(fake: FakeDiscord, allowlist: string): Promise<Target> {
  const work = workDir("fuzz-gateway");
  const gw = await startGw({
    dir: work.dir,
    env: { GW_COMMUNITY_BOT_TOKEN: FAKE_BOT_TOKEN, GW_COMMUNITY_API_URL: fake.apiUrl },
    allowlist,
  }).catch((err) => {
    work.remove();
    throw err;
  });
  const problems = () => {
    const out: string[] = [];
    const { exitCode, signalCode } = gw.proc.proc;
    if (exitCode !== null || signalCode !== null)
      out.push(`gw serve exited (${exitCode ?? signalCode}): ${gw.proc.output().stderr.slice(-1500)}`);
    for (const line of gw.proc.output().stderr.split("\n"))
      if (line.trim() !== "" && !line.startsWith("{")) out.push(`gw serve wrote a non-log line: ${line}`);
    for (const l of gw.logs())
      if (l.level >= 50) out.push(`error logged: ${JSON.stringify(l).slice(0, 300)}`);
    return out;
  };
  return {
    api: async (method, path, body) => {
      const res = method === "GET" ? await gw.get(path) : await gw.post(path, body);
      return { status: res.status, body: res.body ?? {} };
    },
    rowsAfter: (id) => gw.db((db) => db.query<StoredRow, [string]>(ROWS_SQL).all(id)),
    count: (id) => gw.db((db) => (db.query(COUNT_SQL).get(id) as { n: number }).n),
    problems,
    close: async () => {
      const found = problems();
      const code = await gw.stop("SIGTERM");
      work.remove();
      return code === 0 || found.length > 0 ? [] : [`gw serve exited ${code} on SIGTERM`];
    },
  };
}

// --- the fake world and one run: hostile frames, then real messages, then the checks --------------

/**
 * Discord's own heartbeat interval. With the fake's 1 s default, the multi-MiB frames stall the one event
 * loop the fake and discord.js share for longer than a beat: the zombie reconnects that follow hit
 * @discordjs/ws races that are not about malformed frames (see ZOMBIE_RACES).
 */
const HEARTBEAT_INTERVAL_MS = 41_250;

async function fakeWorld() {
  const fake = await startFakeDiscord({ heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS });
  const friend = fake.user({ username: "ann_user", global_name: "Ann" });
  const stranger = fake.user({ username: "sam_user", global_name: null });
  const mallory = fake.user({ username: "mallory", global_name: "Mallory" });
  const guild = fake.guild({ name: "Fuzz" });
  const general = fake.channel(guild.id, { name: "general" });
  const thread = fake.thread(guild.id, general.id, { name: "plans" });
  const dm = fake.dm(friend);
  const allowlist = entry("community_chat", friend.id, "ann");
  return { fake, friend, stranger, mallory, guild, general, thread, dm, allowlist };
}
type World = Awaited<ReturnType<typeof fakeWorld>>;

/** A frame as sent: a sequenced dispatch, or raw text/bytes (with the message payload it carries). */
type Frame = { t: string; d: unknown } | { raw: string | Uint8Array; carries?: Json };

interface Envelope {
  id: string;
  text: string;
  sender: { id: string };
}

function createRun(w: World, target: Target, tag: string) {
  const valid = new Map<string, { text: string; sender: string; status: string }>();
  /** Every MESSAGE_CREATE payload a hostile frame carried, by its id: what a stored row may hold. */
  const hostile = new Map<string, Json[]>();
  const stats = { frames: 0, storedHostile: 0, rounds: 0 };
  /** Real messages in the order posted; the first `settled` were seen stored (frames may reuse their ids). */
  const posted: string[] = [];
  let settled = 0;
  let lastRow = "";
  let pick = 0;

  const remember = (d: unknown) => {
    if (typeof d !== "object" || d === null || typeof (d as Json).id !== "string") return;
    const id = (d as Json).id as string;
    hostile.set(id, [...(hostile.get(id) ?? []), d as Json]);
  };

  const send = (f: Frame) => {
    stats.frames += 1;
    if ("raw" in f) {
      if (f.carries) remember(f.carries);
      w.fake.gateway.sendRaw(f.raw);
      return;
    }
    if (f.t === "MESSAGE_CREATE") remember(f.d);
    w.fake.gateway.dispatch(f.t, f.d);
  };

  /** A real message from `author`, kept in history; returns its payload (dispatched unless told not). */
  const post = (channelId: string, author: FakeUser, text: string, dispatch = true) => {
    const p = w.fake.message(channelId, { author, content: text, dispatch });
    posted.push(p.id as string);
    valid.set(p.id as string, {
      text,
      sender: author.id,
      status: author.id === w.friend.id ? "allowed" : "unknown",
    });
    return p;
  };

  /** A stored real message's id, for frames that reuse one (rotating through them). */
  const storedId = () => (settled === 0 ? undefined : posted[(pick++ * 7919) % settled]);

  const invented = (row: StoredRow): string | null => {
    if (row.text_type !== "text" || row.name_type !== "text") return "text or sender name is not text";
    const v = valid.get(row.platform_id);
    if (v)
      return row.text === v.text && row.sender_id === v.sender && row.status === v.status
        ? null
        : `a real message was stored as ${JSON.stringify({ ...row, text: row.text.slice(0, 80) })}`;
    const candidates = hostile.get(row.platform_id) ?? [];
    if (candidates.length === 0) return "no frame carried this message id";
    const fits = candidates.some((c) => {
      const author = (typeof c.author === "object" && c.author !== null ? c.author : {}) as Json;
      const member = (typeof c.member === "object" && c.member !== null ? c.member : {}) as Json;
      const names = [member.nick, author.global_name, author.username, author.id];
      const content = typeof c.content === "string" ? c.content.toWellFormed() : c.content;
      return (
        author.id === row.sender_id &&
        row.text === (content ?? "") &&
        row.channel_id.endsWith(`:${String(c.channel_id)}`) &&
        names.some((n) => typeof n === "string" && n.toWellFormed() === row.sender_name) &&
        row.attachments <= (Array.isArray(c.attachments) ? c.attachments.length : 0)
      );
    });
    return fits ? null : "no frame with this id carried this sender, text, name and channel";
  };

  /** Real messages after a batch; throws with what did not hold. */
  const settle = async (label: string, expectStored: readonly string[] = []) => {
    stats.rounds += 1;
    const n = stats.rounds;
    const where = [w.general, w.thread, w.dm][n % 3] as { id: string };
    const friendText = `friend ${tag} #${n}`;
    const strangerText = `stranger ${tag} #${n}`;
    post(where.id, w.friend, friendText);
    const s = post(w.general.id, w.stranger, strangerText);
    const since = encodeURIComponent(new Date(snowflakeTime(s.id as string) - 1).toISOString());
    const seen = await waitFor(
      async () => {
        const unread = (await target.api("GET", "/messages/unread?limit=100")).body.messages as Envelope[];
        const quarantine = (await target.api("GET", `/messages/quarantine?limit=100&since=${since}`)).body
          .messages as Envelope[];
        const arrived =
          unread?.some((m) => m.text === friendText && m.sender.id === w.friend.id) &&
          quarantine?.some((m) => m.text === strangerText && m.sender.id === w.stranger.id) &&
          expectStored.every((id) => target.count(id) > 0);
        return arrived ? unread : undefined;
      },
      `the friend's and the stranger's messages after ${label}`,
      15_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; problems: ${target.problems().join(" | ") || "none"}`);
    });
    await target.api("POST", "/messages/mark_read", { message_ids: seen.map((m) => m.id) });
    const health = await target.api("GET", "/healthz");
    if (health.status !== 200) throw new Error(`/healthz answered ${health.status} after ${label}`);
    for (const id of [...expectStored, ...posted.slice(-2)]) {
      const count = target.count(id);
      if (count !== 1) throw new Error(`message ${id} stored ${count} times after ${label}`);
    }
    const rows = target.rowsAfter(lastRow);
    lastRow = rows.at(-1)?.id ?? lastRow;
    for (const row of rows) {
      if (!valid.has(row.platform_id)) stats.storedHostile += 1;
      const wrong = invented(row);
      if (wrong) throw new Error(`after ${label}, stored ${row.platform_id}: ${wrong}`);
    }
    const problems = target.problems();
    if (problems.length > 0) throw new Error(`after ${label}: ${problems.join(" | ")}`);
    settled = posted.length;
  };

  /** Once at the end: nothing stored twice, the connector back to ok. */
  const finish = async (): Promise<string[]> => {
    const failures: string[] = [];
    for (const [id, v] of valid) {
      const count = target.count(id);
      if (count !== 1) failures.push(`${v.text} (${id}) stored ${count} times`);
    }
    await waitFor(
      async () => {
        const h = await target.api("GET", "/healthz");
        const state = (h.body.connectors as Record<string, { state: string }>)?.community_chat?.state;
        return h.status === 200 && state === "ok" ? true : undefined;
      },
      "community_chat ok at the end",
      15_000,
    ).catch((err: Error) => failures.push(err.message));
    failures.push(...target.problems());
    return failures;
  };

  return { send, post, settle, finish, stats, storedId, target };
}
type Run = ReturnType<typeof createRun>;

/** Runs `batch` on `numRuns` generated values, stopping at the first failure (no shrinking: the
 * service carries state from batch to batch, so the failing batch is reported as generated). */
async function checkBatches<T>(
  arb: fc.Arbitrary<T>,
  numRuns: number,
  seed: number,
  batch: (t: T) => Promise<void>,
): Promise<Outcome> {
  const details = await fc.check(fc.asyncProperty(arb, batch), { numRuns, seed, endOnFailure: true });
  if (!details.failed) return { cases: details.numRuns, failures: [] };
  const error =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const example = JSON.stringify(details.counterexample, (_k, v) =>
    typeof v === "string" && v.length > 200 ? `${v.slice(0, 200)}…(${v.length} chars)` : v,
  );
  return {
    cases: details.numRuns,
    failures: [`seed ${seed}, batch ${details.numRuns}: ${error.slice(0, 2000)}\n${example?.slice(0, 3000)}`],
  };
}

// --- hostile values and payloads ----------------------------------------------------------------

const snowflake = (ms: number, low: number) =>
  (((BigInt(Math.floor(ms)) - DISCORD_EPOCH) << 22n) | BigInt(low & 0x3fffff)).toString();
/** A valid snowflake of nothing, 1–30 days old (never an id the fake makes later). */
const pastSnowflake = fc
  .tuple(fc.integer({ min: 1, max: 30 * 86_400_000 }), fc.nat())
  .map(([ago, low]) => snowflake(Date.now() - 86_400_000 - ago, low));
const BAD_SNOWFLAKES = [
  "",
  "0",
  "-1",
  "01234567890123456",
  "abc",
  "1e18",
  " 1234567890123456",
  "1234567890123456 ",
  "18446744073709551616",
  "99999999999999999999999",
  "12345678901234567.5",
  "١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧",
];

/** Markers expanded when a payload is built, so that counterexamples stay short. */
const deepMarker = fc.integer({ min: 60, max: 3000 }).map((n) => ({ $deep: n }));
const hugeMarker = fc.integer({ min: 64 * 1024, max: 2 * MIB }).map((n) => ({ $huge: n }));
const nest = (depth: number) => `${"[".repeat(depth)}0${"]".repeat(depth)}`;
const hugeText = (n: number) =>
  "é🙂 hostile "
    .repeat(Math.ceil(n / 12))
    .slice(0, n)
    .toWellFormed();
function expand(v: unknown, storedId: () => string | undefined): unknown {
  if (v === STORED_ID) return storedId() ?? ABSENT;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return v;
  if ("$deep" in v) return JSON.parse(nest((v as { $deep: number }).$deep));
  if ("$huge" in v) return hugeText((v as { $huge: number }).$huge);
  return v;
}

const junk = fc.oneof(
  fc.constant(ABSENT),
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  nastyString,
  fc.constantFrom(...BAD_SNOWFLAKES),
  pastSnowflake,
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>([], {}, [null], { id: null }, "nope"),
  deepMarker,
);

const hostileUrls = (origin: string) => [
  "file:///etc/passwd",
  `${origin}/attachments/../api/v10/users/@me`,
  `${origin}/attachments/1/2/missing.bin`,
  `${origin}/api/v10/gateway`,
  "http://127.0.0.1:1/refused",
  "javascript:alert(1)",
  "not a url",
  "",
  "http://[::1",
  "data:text/plain,hi",
];
const FILENAMES = ["../../etc/passwd", "a\u0000b.txt", "x".repeat(5000), "", "CON", "%2e%2e%2f.png", "p.png"];
const SIZES = [-1, 0, 1, 1e20, 2 ** 53, 26 * MIB];

function hostileAttachment(origin: string) {
  return fc.record(
    {
      id: fc.oneof(pastSnowflake, junk),
      filename: fc.oneof(fc.constantFrom(...FILENAMES), nastyString, junk),
      size: fc.oneof(fc.constantFrom<unknown>(...SIZES, "5"), junk),
      url: fc.oneof(fc.constantFrom(...hostileUrls(origin)), junk),
      proxy_url: junk,
      content_type: fc.oneof(fc.constantFrom("text/html", "", "a/b\r\nx-injected: 1", "image/png"), junk),
    },
    { requiredKeys: [] },
  );
}

/** Hostile values of the types Discord documents: such a message is stored, with exactly what it carried. */
function wellTypedFields(w: World) {
  const name = fc.oneof(nastyString, fc.constant(null));
  return {
    channel_id: fc.oneof(pastSnowflake, fc.constantFrom(w.general.id, w.thread.id, w.dm.id)),
    guild_id: fc.oneof(pastSnowflake, fc.constant(null)),
    channel_type: fc.constantFrom(0, 1, 3, 5, 11, 15, 99),
    type: fc.constantFrom(0, 19),
    "author.id": fc.oneof(pastSnowflake, fc.constantFrom(w.friend.id, w.stranger.id)),
    "author.username": nastyString,
    "author.global_name": name,
    member: fc.constantFrom(null, {}),
    "member.nick": name,
    content: fc.oneof(nastyString, hugeMarker),
    attachments: fc.array(
      fc.record({
        id: fc.oneof(pastSnowflake, nastyString),
        filename: fc.oneof(fc.constantFrom(...FILENAMES), nastyString),
        size: fc.oneof(fc.constantFrom(...SIZES), fc.nat()),
        url: fc.constantFrom(...hostileUrls(w.fake.origin)),
        content_type: name,
      }),
      { maxLength: 3 },
    ),
    message_reference: fc.record({
      message_id: fc.oneof(pastSnowflake, fc.constant(STORED_ID)),
      channel_id: pastSnowflake,
    }),
    timestamp: nastyString,
    nonce: nastyString,
    embeds: fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 3 }),
  };
}

/** Field paths of a message payload and what to put there. */
function messageFields(w: World) {
  const ids = fc.constantFrom(w.general.id, w.thread.id, w.dm.id);
  return {
    id: fc.oneof(junk, fc.constant(STORED_ID), pastSnowflake),
    channel_id: fc.oneof(junk, ids, pastSnowflake),
    guild_id: fc.oneof(junk, pastSnowflake, fc.constant(w.guild.id)),
    channel_type: fc.oneof(junk, fc.constantFrom(0, 1, 3, 5, 11, 15, 99, -1, "1")),
    type: fc.oneof(junk, fc.constantFrom(0, 7, 19, 20, 46, -1, 1.5, "0")),
    author: fc.oneof(
      junk,
      fc.constantFrom<unknown>(
        { username: "no id" },
        { id: null, username: "null id" },
        { id: w.friend.id },
        { id: w.fake.bot.id, username: "bot", bot: true },
        { id: Number(w.friend.id), username: "number id" },
      ),
    ),
    "author.id": fc.oneof(junk, fc.constantFrom(w.friend.id, w.stranger.id, w.fake.bot.id), pastSnowflake),
    "author.username": junk,
    "author.global_name": junk,
    member: fc.oneof(
      junk,
      fc.constantFrom<unknown>("nope", [], { nick: 5 }, { nick: "Evil" }, { user: null }),
    ),
    "member.nick": junk,
    content: fc.oneof(junk, hugeMarker),
    attachments: fc.oneof(junk, fc.array(fc.oneof(junk, hostileAttachment(w.fake.origin)), { maxLength: 3 })),
    "attachments.0": hostileAttachment(w.fake.origin),
    message_reference: fc.oneof(
      junk,
      fc.record(
        {
          message_id: fc.oneof(pastSnowflake, fc.constant(STORED_ID), junk),
          channel_id: fc.oneof(pastSnowflake, junk),
          guild_id: junk,
          type: fc.oneof(fc.constantFrom(0, 1), junk),
        },
        { requiredKeys: [] },
      ),
    ),
    referenced_message: junk,
    timestamp: fc.oneof(junk, fc.constantFrom("garbage", "9999-99-99T99:99:99Z", "2026-02-30T00:00:00Z")),
    edited_timestamp: junk,
    mentions: junk,
    embeds: junk,
    components: junk,
    nonce: junk,
    flags: junk,
  };
}

function baseMessage(w: World, id: string, where: string, who: string): Json {
  const channel = { general: w.general, thread: w.thread, dm: w.dm }[where] as { id: string };
  const author = { friend: w.friend, stranger: w.stranger, mallory: w.mallory }[who] as FakeUser;
  const inGuild = channel !== w.dm;
  return {
    id,
    channel_id: channel.id,
    author: { id: author.id, username: author.username, global_name: author.global_name, discriminator: "0" },
    content: `hostile ${id}`,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    flags: 0,
    components: [],
    type: 0,
    ...(inGuild
      ? { guild_id: w.guild.id, channel_type: 0, member: { nick: null, roles: [], joined_at: "2026-01-01" } }
      : { channel_type: 1 }),
  };
}

/** Sets (or with ABSENT removes) `path` in `root`; a path through a non-object is left alone. */
function setPath(root: unknown, path: string, value: unknown): void {
  const keys = path.split(".");
  let node = root;
  for (const k of keys.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return;
    node = (node as Json)[k];
  }
  if (typeof node !== "object" || node === null) return;
  const last = keys.at(-1) as string;
  if (value === ABSENT) delete (node as Json)[last];
  else (node as Json)[last] = value;
}

const WHOLE = fc.constantFrom<unknown>(null, [], "x", 5, true, {});
type Mutation = [string, unknown];
interface DispatchSpec {
  t: string;
  id: string;
  where: string;
  who: string;
  mutations: Mutation[];
  whole: unknown;
}

const mutationsOf = (fields: Record<string, fc.Arbitrary<unknown>>, max: number) =>
  fc.array(fc.oneof(...Object.entries(fields).map(([path, arb]) => fc.tuple(fc.constant(path), arb))), {
    maxLength: max,
  }) as fc.Arbitrary<Mutation[]>;

/** Hostile dispatches: malformed messages mostly, then channel, thread, guild and unknown events. */
function dispatchSpec(w: World): fc.Arbitrary<DispatchSpec> {
  const fields = messageFields(w);
  const channelFields = {
    id: fc.oneof(junk, pastSnowflake, fc.constantFrom(w.general.id, w.thread.id)),
    type: fc.oneof(junk, fc.constantFrom(0, 1, 2, 4, 11, 12, 15, 99)),
    guild_id: fc.oneof(junk, pastSnowflake),
    parent_id: fc.oneof(junk, pastSnowflake),
    name: junk,
    permission_overwrites: junk,
    recipients: junk,
    thread_metadata: junk,
    owner_id: junk,
    member: junk,
    position: junk,
  };
  const guildFields = {
    id: fc.oneof(junk, pastSnowflake, fc.constant(w.guild.id)),
    name: junk,
    channels: fc.oneof(
      junk,
      fc.constantFrom<unknown>([null], [{ id: null, type: 0 }], [{ id: "5", type: "x" }]),
    ),
    threads: junk,
    roles: fc.oneof(junk, fc.constantFrom<unknown>([null], [{ id: null }])),
    members: fc.oneof(junk, fc.constantFrom<unknown>([{ user: null }], [null], [{ user: { id: 5 } }])),
    emojis: junk,
    stickers: junk,
    presences: junk,
    voice_states: junk,
    unavailable: junk,
  };
  const base = { id: pastSnowflake, where: fc.constantFrom("general", "thread", "dm") };
  const who = fc.constantFrom("mallory", "friend", "stranger");
  const rare = fc.option(WHOLE, { freq: 12, nil: undefined });
  const unknownName = fc
    .oneof(
      fc.stringMatching(/^[A-Z][A-Z_]{0,24}$/),
      fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "", "message_create"),
      fc.constantFrom("MESSAGE_CREATE ", "TYPING_START", "INTERACTION_CREATE", "GUILD_MEMBERS_CHUNK"),
    )
    .filter((t) => !["READY", "RESUMED", "MESSAGE_CREATE", "GUILD_CREATE"].includes(t));
  const of = (t: fc.Arbitrary<string>, f: Record<string, fc.Arbitrary<unknown>>, max: number) =>
    fc.record({ t, ...base, who, mutations: mutationsOf(f, max), whole: rare });
  return fc.oneof(
    { weight: 8, arbitrary: of(fc.constant("MESSAGE_CREATE"), fields, 4) },
    { weight: 5, arbitrary: of(fc.constant("MESSAGE_CREATE"), wellTypedFields(w), 5) },
    { weight: 2, arbitrary: of(fc.constant("MESSAGE_UPDATE"), fields, 3) },
    {
      weight: 1,
      arbitrary: of(fc.constant("MESSAGE_DELETE"), { id: fields.id, channel_id: fields.channel_id }, 2),
    },
    { weight: 1, arbitrary: of(fc.constantFrom("CHANNEL_CREATE", "THREAD_CREATE"), channelFields, 3) },
    { weight: 1, arbitrary: of(fc.constant("GUILD_CREATE"), guildFields, 3) },
    {
      weight: 1,
      arbitrary: fc.record({
        t: unknownName,
        ...base,
        who,
        mutations: fc.constant([]),
        whole: fc.oneof(fc.jsonValue({ maxDepth: 4 }), junk),
      }),
    },
  ) as fc.Arbitrary<DispatchSpec>;
}

function buildDispatch(w: World, s: DispatchSpec, storedId: () => string | undefined): Frame {
  let d: unknown;
  if (s.t.startsWith("MESSAGE_")) d = baseMessage(w, s.id, s.where, s.who);
  else if (s.t === "CHANNEL_CREATE" || s.t === "THREAD_CREATE")
    d = {
      id: s.id,
      type: s.t === "THREAD_CREATE" ? 11 : 0,
      guild_id: w.guild.id,
      name: "x",
      parent_id: null,
    };
  else if (s.t === "GUILD_CREATE")
    d = { id: s.id, name: "x", channels: [], threads: [], roles: [], members: [] };
  else d = {};
  for (const [path, value] of s.mutations) setPath(d, path, expand(value, storedId));
  if (s.whole !== undefined) d = expand(s.whole, storedId);
  return { t: s.t, d };
}

// --- raw frames ---------------------------------------------------------------------------------

type RawSpec =
  | { kind: "unknown-op"; op: unknown; d: unknown; s: unknown }
  | { kind: "op0-odd-t"; t: unknown; s: unknown; d: unknown }
  | { kind: "odd-s"; s: unknown[] }
  | { kind: "text"; text: string }
  | { kind: "truncated"; at: number }
  | { kind: "binary"; bytes: Uint8Array }
  | { kind: "binary-json" }
  | { kind: "huge"; mib: number; as: "message" | "text" | "binary" }
  | { kind: "deep"; depth: number; as: "embeds" | "d" | "frame" };

const KNOWN_OPS = [0, 1, 7, 9, 10, 11];
const oddSequence = fc.oneof(
  fc.constantFrom<unknown>(0, -1, 1, 2, "7", "abc", null, {}, [], true, 1e300, 2 ** 63, 1.5, ABSENT),
  fc.integer(),
);

function rawSpec(): fc.Arbitrary<RawSpec> {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), junk);
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("unknown-op" as const),
        op: fc.oneof(
          fc.integer().filter((n) => !KNOWN_OPS.includes(n)),
          fc.constantFrom<unknown>(2, 3, 4, 6, 8, 12, "0", "10", null, 1.5, true, {}, [], ABSENT),
          fc.constantFrom(1, 11),
        ),
        d: value,
        s: oddSequence,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("op0-odd-t" as const),
        t: fc.oneof(fc.constantFrom<unknown>(ABSENT, null, 5, {}, [], "", "__proto__", "NOPE"), nastyString),
        s: oddSequence,
        d: value,
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("odd-s" as const),
        s: fc.array(oddSequence, { minLength: 1, maxLength: 2 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("text" as const),
        text: fc.oneof(
          nastyString,
          fc.constantFrom("", "null", "0", "true", '"op"', "[]", "[null]", "{}", '{"op":0', "{op:11}"),
          fc.constantFrom(
            '{"op":11}}',
            '{"op":NaN}',
            '\uFEFF{"op":11}',
            '{"op":0,"t":"MESSAGE_CREATE","d":null}',
          ),
        ),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("truncated" as const), at: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("binary" as const),
        bytes: fc.uint8Array({ maxLength: 2048 }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("binary-json" as const) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("deep" as const),
        depth: fc.integer({ min: 10_000, max: 200_000 }),
        as: fc.constantFrom("embeds" as const, "d" as const, "frame" as const),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("huge" as const),
        mib: fc.integer({ min: 1, max: 8 }),
        as: fc.constantFrom("message" as const, "text" as const, "binary" as const),
      }),
    },
  );
}

const frameText = (op: unknown, t: unknown, s: unknown, d: unknown) => {
  const f: Json = { op, t, s, d };
  for (const k of Object.keys(f)) if (f[k] === ABSENT) delete f[k];
  return JSON.stringify(f);
};

/** Sends one raw spec; returns the ids of real messages it carried, which must be stored once. */
function sendRawSpec(w: World, run: Run, spec: RawSpec, n: number): string[] {
  const hostileMessage = () => baseMessage(w, snowflake(Date.now() - 86_400_000, n), "general", "mallory");
  switch (spec.kind) {
    case "unknown-op":
      run.send({ raw: frameText(spec.op, ABSENT, spec.s, spec.d) });
      return [];
    case "op0-odd-t":
      run.send({ raw: frameText(0, spec.t, spec.s, spec.d) });
      return [];
    case "odd-s": {
      const p = run.post(w.general.id, w.friend, `raw odd-s #${n}`, false);
      for (const s of spec.s) run.send({ raw: frameText(0, "MESSAGE_CREATE", s, p) });
      return [p.id as string];
    }
    case "text":
      run.send({ raw: spec.text });
      return [];
    case "truncated": {
      const d = hostileMessage();
      const text = frameText(0, "MESSAGE_CREATE", 1, d);
      run.send({ raw: text.slice(0, 1 + (spec.at % text.length)), carries: d });
      return [];
    }
    case "binary":
      run.send({ raw: spec.bytes });
      return [];
    case "binary-json": {
      const d = hostileMessage();
      run.send({ raw: new TextEncoder().encode(frameText(0, "MESSAGE_CREATE", 1, d)), carries: d });
      return [];
    }
    case "deep": {
      const deep = nest(spec.depth);
      if (spec.as === "frame") run.send({ raw: deep });
      else if (spec.as === "d") run.send({ raw: `{"op":0,"t":"MESSAGE_CREATE","s":1,"d":${deep}}` });
      else {
        const d = hostileMessage();
        const text = frameText(0, "MESSAGE_CREATE", 1, d);
        run.send({ raw: `${text.slice(0, -2)},"embeds":${deep}}}`, carries: d });
      }
      return [];
    }
    case "huge": {
      const size = spec.mib * MIB;
      if (spec.as === "binary") run.send({ raw: new Uint8Array(size).fill(0x7b) });
      else if (spec.as === "text") run.send({ raw: `{"op":0,"t":"MESSAGE_CREATE","d":"${"x".repeat(size)}` });
      else {
        // The stranger's: quarantined, so the unread polls of every later batch do not carry it.
        const p = run.post(w.thread.id, w.stranger, hugeText(size), false);
        run.send({ raw: frameText(0, "MESSAGE_CREATE", 2, p) });
        return [p.id as string];
      }
      return [];
    }
  }
}

// --- the named corpora: every malformation the issue lists, once, before the random batches ---------

function namedDispatches(w: World): [string, DispatchSpec][] {
  let n = 0;
  const spec = (
    label: string,
    mutations: Mutation[],
    o: { t?: string; whole?: unknown; who?: string; where?: string } = {},
  ): [string, DispatchSpec] => [
    label,
    {
      t: o.t ?? "MESSAGE_CREATE",
      id: snowflake(Date.now() - 2 * 86_400_000, ++n),
      where: o.where ?? "general",
      who: o.who ?? "mallory",
      mutations,
      whole: o.whole,
    },
  ];
  const past = () => snowflake(Date.now() - 3 * 86_400_000, ++n);
  const origin = w.fake.origin;
  return [
    spec("MESSAGE_CREATE without id", [["id", ABSENT]]),
    spec("without channel_id", [["channel_id", ABSENT]]),
    spec("without author", [["author", ABSENT]]),
    spec("without content", [["content", ABSENT]]),
    spec("id as a number", [["id", 1234567890123456]]),
    spec("channel_id as a number", [["channel_id", Number(w.general.id)]]),
    spec("null author", [["author", null]]),
    spec("author without id", [["author.id", ABSENT]]),
    spec("author id as a number", [["author.id", Number(w.friend.id)]], { who: "friend" }),
    spec("author name as an object", [["author.global_name", { a: 1 }]]),
    spec("the friend's id with no name", [["author", { id: w.friend.id }]], { where: "dm" }),
    spec("content as an object", [["content", { a: 1 }]]),
    spec("content of 2 MiB", [["content", { $huge: 2 * MIB }]], { where: "thread" }),
    spec("id not a snowflake", [["id", "abc"]]),
    spec("id 0", [["id", "0"]]),
    spec("id over 64 bits", [["id", "18446744073709551616"]]),
    spec("channel_id with a leading zero", [["channel_id", "01234567890123456"]]),
    spec("attachments not an array", [["attachments", { a: 1 }]]),
    spec("attachments [null]", [["attachments", [null]]]),
    spec("attachments with hostile url, filename and size", [
      [
        "attachments",
        [
          { id: past(), filename: "../../etc/passwd", size: -1, url: "file:///etc/passwd" },
          { id: past(), filename: "a\u0000b", size: 1e20, url: `${origin}/attachments/1/2/missing.bin` },
          { id: past(), filename: "x", size: 5, url: "http://127.0.0.1:1/refused" },
          { id: past(), filename: "g.json", size: 10, url: `${origin}/attachments/../api/v10/gateway` },
        ],
      ],
    ]),
    spec("message_reference to nowhere", [["message_reference", { message_id: past(), channel_id: past() }]]),
    spec("unknown channel_id and guild_id", [
      ["channel_id", past()],
      ["guild_id", past()],
    ]),
    spec("member as a string", [["member", "nope"]]),
    spec("timestamp garbage", [
      ["timestamp", "garbage"],
      ["edited_timestamp", {}],
    ]),
    spec("embeds nested 3000 deep", [["embeds", { $deep: 3000 }]]),
    spec("d null", [], { whole: null }),
    spec("d an array", [], { whole: [] }),
    spec("MESSAGE_UPDATE d null", [], { t: "MESSAGE_UPDATE", whole: null }),
    spec(
      "MESSAGE_UPDATE changing a stored message",
      [
        ["id", STORED_ID],
        ["content", "changed by an update"],
      ],
      { t: "MESSAGE_UPDATE" },
    ),
    spec(
      "MESSAGE_UPDATE with a null author",
      [
        ["id", STORED_ID],
        ["author", null],
      ],
      { t: "MESSAGE_UPDATE" },
    ),
    spec("MESSAGE_DELETE d null", [], { t: "MESSAGE_DELETE", whole: null }),
    spec("MESSAGE_DELETE of a stored message", [["id", STORED_ID]], { t: "MESSAGE_DELETE" }),
    spec("CHANNEL_CREATE d null", [], { t: "CHANNEL_CREATE", whole: null }),
    spec(
      "CHANNEL_CREATE with a number id and a string type",
      [
        ["id", 5],
        ["type", "x"],
      ],
      { t: "CHANNEL_CREATE" },
    ),
    spec(
      "THREAD_CREATE with junk metadata",
      [
        ["thread_metadata", "x"],
        ["parent_id", null],
      ],
      { t: "THREAD_CREATE" },
    ),
    spec("GUILD_CREATE d null", [], { t: "GUILD_CREATE", whole: null }),
    spec(
      "GUILD_CREATE of our guild with channels a string",
      [
        ["id", w.guild.id],
        ["channels", "x"],
      ],
      { t: "GUILD_CREATE" },
    ),
    spec("GUILD_CREATE with a null member user", [["members", [{ user: null }]]], { t: "GUILD_CREATE" }),
    spec("unknown event", [], { t: "NOT_AN_EVENT", whole: { a: 1 } }),
    spec("event named __proto__", [], { t: "__proto__", whole: {} }),
    spec("event named constructor", [], { t: "constructor", whole: null }),
  ];
}

const NAMED_RAW: [string, RawSpec][] = [
  ["unknown op 99", { kind: "unknown-op", op: 99, d: {}, s: ABSENT }],
  ['op "0" (a string)', { kind: "unknown-op", op: "0", d: { a: 1 }, s: 3 }],
  ["no op", { kind: "unknown-op", op: ABSENT, d: null, s: ABSENT }],
  ["op 11 with junk", { kind: "unknown-op", op: 11, d: "x", s: "y" }],
  ["op 0 without t", { kind: "op0-odd-t", t: ABSENT, s: 5, d: {} }],
  ["op 0 with t a number", { kind: "op0-odd-t", t: 5, s: 6, d: null }],
  ["s backwards", { kind: "odd-s", s: [0, -1] }],
  ["s not a number", { kind: "odd-s", s: ["abc", null] }],
  ["s huge", { kind: "odd-s", s: [1e300] }],
  ["non-JSON text", { kind: "text", text: "{not json" }],
  ["empty text", { kind: "text", text: "" }],
  ["JSON null", { kind: "text", text: "null" }],
  ["a truncated dispatch", { kind: "truncated", at: 40 }],
  ["binary bytes", { kind: "binary", bytes: new Uint8Array([0, 1, 2, 0xff]) }],
  ["a dispatch as a binary frame", { kind: "binary-json" }],
  ["8 MiB message", { kind: "huge", mib: 8, as: "message" }],
  ["1 MiB of non-JSON", { kind: "huge", mib: 1, as: "text" }],
  ["2 MiB binary", { kind: "huge", mib: 2, as: "binary" }],
  ["a frame nested 100k deep", { kind: "deep", depth: 100_000, as: "frame" }],
  ["d nested 100k deep", { kind: "deep", depth: 100_000, as: "d" }],
  ["embeds nested 60k deep", { kind: "deep", depth: 60_000, as: "embeds" }],
];

// --- items ----------------------------------------------------------------------------------------

/** Seen while writing these items, left open: @discordjs/ws races under zombie reconnects. */
const ZOMBIE_RACES =
  "seen with the fake's 1 s heartbeat (multi-MiB frames stalled the event loop the fake and discord.js share past a beat, so discord.js closed its socket as a zombie, 4200, and resumed, up to 15 times in a run) and left open, since no frame's content is involved: @discordjs/ws 1.2.3 itself then (1) raised an unhandled rejection from heartbeat() sending on a socket not open (it would end gw serve), (2) twice in about ten scale-30 runs let the service's stop hang (its one unbounded wait is the connector's client.destroy()), and (3) after a stop within its 500 ms reconnect delay, reconnected and kept the process alive; the items now use Discord's 41.25 s interval";

/** Frames tried against the process only: in process, bun test itself takes the unhandled rejection. */
const NOT_TRIED =
  "not tried in process: op 9 (INVALID_SESSION) or op 10 (HELLO) without d, and a READY dispatch with d null: @discordjs/ws 1.2.3 (WebSocketShard.onMessage) reads payload.d.toString(), payload.d.heartbeat_interval and payload.d.session_id itself, in a promise it never awaits, so the TypeError is an unhandled rejection, which bun test reports as a failure of its own; gateway-process sends them to a gw serve process, whose process-level policy restarts the Discord connector";

/** Frames that make @discordjs/ws raise an unhandled rejection: gw serve restarts its Discord connector. */
const LIBRARY_FAULTS: [string, Json][] = [
  ["op 10 (HELLO) without d", { op: 10 }],
  ["op 9 (INVALID_SESSION) without d", { op: 9 }],
  ["READY with d null", { op: 0, t: "READY", s: 1_000_000, d: null }],
];

type Body = (w: World, run: Run, seed: number) => Promise<Outcome>;

/** A fake Discord and a service logged in to it; `body` sends; everything is closed before returning. */
async function session(where: "in-process" | "gw serve", tag: string, seed: number, body: Body) {
  const w = await fakeWorld();
  let target: Target | null = null;
  const out: Outcome = { cases: 0, failures: [], notes: [] };
  try {
    target =
      where === "in-process" ? await inProcess(w.fake, w.allowlist) : await subprocess(w.fake, w.allowlist);
    const t = target;
    await waitFor(
      async () => {
        const h = await t.api("GET", "/healthz");
        const c = (h.body.connectors as Record<string, { state: string }>)?.community_chat;
        return c?.state === "ok" ? true : undefined;
      },
      `community_chat ok (${where})`,
      20_000,
    );
    const before = {
      identifies: w.fake.gateway.identifies,
      resumes: w.fake.gateway.resumes,
      closes: w.fake.gateway.closes().length,
    };
    const run = createRun(w, t, tag);
    const started = performance.now();
    const result = await body(w, run, seed).catch((err: Error) => ({
      cases: 0,
      failures: [`stopped: ${err.message}`],
    }));
    out.failures.push(...result.failures, ...(await run.finish()));
    out.cases = run.stats.frames;
    const again = {
      identifies: w.fake.gateway.identifies - before.identifies,
      resumes: w.fake.gateway.resumes - before.resumes,
    };
    const closes = w.fake.gateway.closes().slice(before.closes);
    out.notes?.push(
      `${where}: ${run.stats.frames} hostile frames in ${run.stats.rounds} batches (${Math.round(performance.now() - started)} ms); ${run.stats.storedHostile} messages stored from hostile frames, each with its own frame's data; the rest refused or ignored`,
      again.identifies + again.resumes === 0
        ? `${where}: discord.js kept its socket through every frame (no new IDENTIFY, no RESUME)`
        : `${where}: the socket closed ${closes.length} time(s) (${closes.map((c) => `${c.code} "${c.reason}"`).join(", ")}); the connector came back with ${again.identifies} IDENTIFY and ${again.resumes} RESUME, and every real message after still arrived`,
    );
  } catch (err) {
    out.failures.push(`the run itself failed: ${describeError(err)}`);
  } finally {
    if (target) out.failures.push(...(await target.close().catch((err) => [describeError(err)])));
    await w.fake.stop();
  }
  return out;
}

async function sendNamedDispatches(w: World, run: Run) {
  const named = namedDispatches(w);
  for (let i = 0; i < named.length; i += 6) {
    const batch = named.slice(i, i + 6);
    for (const [, spec] of batch) run.send(buildDispatch(w, spec, run.storedId));
    await run.settle(batch.map(([label]) => label).join("; "));
  }
}

async function sendNamedRaw(w: World, run: Run, list: [string, RawSpec][]) {
  for (let i = 0; i < list.length; i += 5) {
    const batch = list.slice(i, i + 5);
    const expect = batch.flatMap(([, spec], k) => sendRawSpec(w, run, spec, 1_000 + i + k));
    await run.settle(batch.map(([label]) => label).join("; "), expect);
  }
}

export const gatewayDispatches: FuzzItem = {
  id: "gateway-dispatches",
  tried:
    "Sequenced dispatches from the fake Discord with malformed payloads: MESSAGE_CREATE (missing id/channel_id/author/content, ids as numbers, invalid snowflakes, null author, author without id, names and content of the wrong type, content of 2 MiB, attachments not an array or with hostile url/filename/size, replies to nowhere, unknown channel and guild, member as a string, timestamp garbage, nesting up to 3000 deep, d null), MESSAGE_UPDATE/DELETE of stored messages, CHANNEL_CREATE, THREAD_CREATE, GUILD_CREATE and unknown event names (__proto__, constructor...); a friend and a stranger post after every batch",
  held: "no unhandled rejection or exception, no error logged, /healthz 200 after every batch; each real message stored exactly once (the friend's unread, the stranger's quarantined); every stored hostile message carries its frame's own id, sender, name, text and channel; the connector ok at the end",
  run: ({ scale, seed }) =>
    session("in-process", "dispatch", seed, async (w, run) => {
      await sendNamedDispatches(w, run);
      return checkBatches(
        fc.array(dispatchSpec(w), { minLength: 1, maxLength: 10 }),
        12 * scale,
        seed,
        async (specs) => {
          for (const spec of specs) run.send(buildDispatch(w, spec, run.storedId));
          await run.settle(`a batch of ${specs.map((s) => s.t).join(", ")}`);
        },
      );
    }),
};

export const gatewayRawFrames: FuzzItem = {
  id: "gateway-raw-frames",
  tried:
    "Raw frames outside the protocol: unknown op codes (numbers, strings, null, missing), op 1/11 with junk, op 0 without t or with t not a string, real messages re-sent with s going backwards, not numeric or 1e300, non-JSON and truncated JSON, empty text, JSON scalars, binary frames (random bytes, a dispatch as bytes), frames of 1–8 MiB (a real 8 MiB message, non-JSON, binary), JSON nested 10k–200k deep (whole frame, d, a message's embeds); a friend and a stranger post after every batch",
  held: "no unhandled rejection or exception, no error logged, /healthz 200 after every batch; the real messages in odd-sequence and 8 MiB frames stored exactly once with their exact text, the deep one refused without holding its channel, and the friend's and stranger's messages after each batch stored once; the connector ok at the end",
  run: async ({ scale, seed }) => {
    const out = await session("in-process", "raw", seed, async (w, run) => {
      await sendNamedRaw(w, run, NAMED_RAW);
      let n = 0;
      return checkBatches(
        fc.array(rawSpec(), { minLength: 1, maxLength: 8 }),
        10 * scale,
        seed,
        async (specs) => {
          const expect = specs.flatMap((spec) => sendRawSpec(w, run, spec, ++n));
          await run.settle(`a batch of ${specs.map((s) => s.kind).join(", ")}`, expect);
        },
      );
    });
    return { ...out, notes: [...(out.notes ?? []), NOT_TRIED, ZOMBIE_RACES] };
  },
};

/** The frames that ended a `gw serve` process before the connector refused them (see the notes). */
const CRASHERS = [
  "d null",
  "null author",
  "attachments [null]",
  "attachments not an array",
  "member as a string",
  "content as an object",
  "GUILD_CREATE d null",
  "event named __proto__",
];

export const gatewayProcess: FuzzItem = {
  id: "gateway-process",
  tried:
    "A real `gw serve` process (from source, default connector timings) logged in to the fake Discord, sent the dispatches that used to end it (d null, null author, attachments [null] or not an array, member a string, content an object, GUILD_CREATE d null, an event named __proto__), the frames that make @discordjs/ws raise an unhandled rejection (op 10 and op 9 without d, READY with d null), a message nested 60k deep, non-JSON, binary, an unknown op and an 8 MiB message, then random batches of dispatches and raw frames",
  held: "the process stays up (nothing but JSON log lines on stderr, no error logged), /healthz 200 after every batch, each real message stored exactly once, nothing invented; after each library fault the connector restarts (a new IDENTIFY) and is ok again; the connector ok at the end; SIGTERM exits 0",
  run: ({ scale, seed }) =>
    session("gw serve", "process", seed, async (w, run) => {
      const named = namedDispatches(w).filter(([label]) => CRASHERS.includes(label));
      for (const [, spec] of named) run.send(buildDispatch(w, spec, run.storedId));
      await run.settle(CRASHERS.join("; "));
      for (const [label, frame] of LIBRARY_FAULTS) {
        const identifies = w.fake.gateway.identifies;
        run.send({ raw: JSON.stringify(frame) });
        await waitFor(
          () => (w.fake.gateway.identifies > identifies ? true : undefined),
          `a restart after ${label}`,
        );
        await waitFor(
          async () => {
            const h = await run.target.api("GET", "/healthz");
            return (h.body.connectors as Record<string, { state: string }>)?.community_chat?.state === "ok"
              ? true
              : undefined;
          },
          `community_chat ok after ${label}`,
          15_000,
        );
        await run.settle(label);
      }
      await sendNamedRaw(
        w,
        run,
        NAMED_RAW.filter(([label]) =>
          [
            "embeds nested 60k deep",
            "non-JSON text",
            "binary bytes",
            "unknown op 99",
            "8 MiB message",
          ].includes(label),
        ),
      );
      let n = 0;
      const mixed = fc.oneof(
        dispatchSpec(w).map((d) => ({ d })),
        rawSpec().map((r) => ({ r })),
      );
      return checkBatches(
        fc.array(mixed, { minLength: 1, maxLength: 8 }),
        3 * scale,
        seed,
        async (frames) => {
          const expect: string[] = [];
          for (const f of frames)
            if ("d" in f) run.send(buildDispatch(w, f.d, run.storedId));
            else expect.push(...sendRawSpec(w, run, f.r, ++n));
          await run.settle(`a mixed batch of ${frames.length}`, expect);
        },
      );
    }),
};

export const gatewayItems: FuzzItem[] = [gatewayDispatches, gatewayRawFrames, gatewayProcess];
