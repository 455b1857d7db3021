/**
 * One gateway run: a fake Discord (a friend, a stranger, mallory; a guild with a channel and a thread; a
 * DM) with a service logged in to it (`session`). Hostile frames are sent, then each batch is settled: a
 * friend and a stranger post, both must arrive exactly once, /healthz must answer 200, and every stored
 * row must carry a real message's or one hostile frame's own data. Everything is closed before returning.
 */
import fc from "fast-check";
import { snowflakeTime } from "../../../../src/connectors/community-chat/snowflake.ts";
import { type FakeUser, startFakeDiscord } from "../../../../src/demo/fake-discord/server.ts";
import { waitFor } from "../../../helpers/process.ts";
import { entry } from "../../faults/harness.ts";
import type { Outcome } from "../types.ts";
import { describeError, inProcess, type StoredRow, subprocess, type Target } from "./target.ts";
import type { Json } from "./values.ts";

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
export type World = Awaited<ReturnType<typeof fakeWorld>>;

/** A frame as sent: a sequenced dispatch, or raw text/bytes (with the message payload it carries). */
export type Frame = { t: string; d: unknown } | { raw: string | Uint8Array; carries?: Json };

interface Envelope {
  id: string;
  text: string;
  sender: { id: string };
}

/** A real message as posted: what its stored row must hold. */
type Real = { text: string; sender: string; status: string };

/** Why a stored row holds what neither a real message nor any hostile frame with its id carried, or null. */
function invented(row: StoredRow, valid: Map<string, Real>, hostile: Map<string, Json[]>): string | null {
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
}

/** Waits until one batch's friend and stranger messages (and `expectStored`) are in; the unread list. */
function awaitRealMessages(
  w: World,
  target: Target,
  o: {
    label: string;
    friendText: string;
    strangerText: string;
    since: string;
    expectStored: readonly string[];
  },
): Promise<Envelope[]> {
  return waitFor(
    async () => {
      const unread = (await target.api("GET", "/messages/unread?limit=100")).body.messages as Envelope[];
      const quarantine = (await target.api("GET", `/messages/quarantine?limit=100&since=${o.since}`)).body
        .messages as Envelope[];
      const arrived =
        unread?.some((m) => m.text === o.friendText && m.sender.id === w.friend.id) &&
        quarantine?.some((m) => m.text === o.strangerText && m.sender.id === w.stranger.id) &&
        o.expectStored.every((id) => target.count(id) > 0);
      return arrived ? unread : undefined;
    },
    `the friend's and the stranger's messages after ${o.label}`,
    15_000,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; problems: ${target.problems().join(" | ") || "none"}`);
  });
}

/** Once at the end: nothing stored twice, the connector back to ok. */
async function finishRun(target: Target, valid: Map<string, Real>): Promise<string[]> {
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
}

function createRun(w: World, target: Target, tag: string) {
  const valid = new Map<string, Real>();
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
    const seen = await awaitRealMessages(w, target, { label, friendText, strangerText, since, expectStored });
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
      const wrong = invented(row, valid, hostile);
      if (wrong) throw new Error(`after ${label}, stored ${row.platform_id}: ${wrong}`);
    }
    const problems = target.problems();
    if (problems.length > 0) throw new Error(`after ${label}: ${problems.join(" | ")}`);
    settled = posted.length;
  };

  const finish = () => finishRun(target, valid);
  return { send, post, settle, finish, stats, storedId, target };
}
export type Run = ReturnType<typeof createRun>;

/** Runs `batch` on `numRuns` generated values, stopping at the first failure (no shrinking: the
 * service carries state from batch to batch, so the failing batch is reported as generated). */
export async function checkBatches<T>(
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

export type Body = (w: World, run: Run, seed: number) => Promise<Outcome>;

/** A fake Discord and a service logged in to it; `body` sends; everything is closed before returning. */
export async function session(where: "in-process" | "gw serve", tag: string, seed: number, body: Body) {
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
