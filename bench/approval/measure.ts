/**
 * bench/approval/approval.ts's samples, one at a time, each made of four steps a seeded gap apart:
 * - prompt, relayed: the MCP client sends `permission_request` (t0) → the prompt posted on Discord (the
 *   fake's onPost) and committed into chat.db by the stand-in (the watcher's sighting);
 * - prompt, direct (the floor): the same text POSTed to /messages/send for both chats at once, in the
 *   order the relay sends them (GET /channels, untimed, before t0), with the relay's API client and
 *   Idempotency-Key shape (t0 just before) → the same two sightings;
 * - verdict: the owner's `yes <id>` / `no <id>` committed (t2: the chat.db writer's commit returned, or
 *   the fake's MESSAGE_CREATE handed to the socket) → the `permission` notification at the client (t3);
 * - ordinary (the floor): an ordinary message from the owner on the same platform → its
 *   `notifications/claude/channel` push at the same client.
 * The two prompt steps, and the two answer steps, run in a seeded random order; the answer's platform
 * alternates per sample and its word every two samples (so all four pairs come equally often).
 */
import { createHash } from "node:crypto";
import { createApiClient } from "../../src/mcp/api-client.ts";
import { PERMISSION_REQUEST_METHOD, type PermissionRequest, promptText } from "../../src/mcp/permission.ts";
import { FRIEND, FRIEND_CHAT } from "../lib/chatdb.ts";
import { TOKEN } from "../lib/settings.ts";
import { AGENT_ID, gapMs, N, OWNER, progress, random, requestIds, STUCK_MS, WARMUP } from "./settings.ts";
import type { World } from "./world.ts";

export type Platform = "discord" | "imessage";
export const PLATFORMS: readonly Platform[] = ["discord", "imessage"];

/** One prompt: ms from t0 to each platform's sighting (null: stuck). */
export interface PromptSample {
  id: string;
  path: "relay" | "direct";
  /** The order of the two sends: the owner's channels as GET /channels lists them (newest activity first). */
  first: Platform;
  /** That GET /channels call's own time (the relay makes the same call after t0; untimed here). */
  listMs: number;
  ms: Record<Platform, number | null>;
}

/** One answer: ms from its commit to the notification (null: stuck). */
export interface AnswerSample {
  id: string;
  path: "verdict" | "ordinary";
  platform: Platform;
  behavior: "allow" | "deny" | null;
  ms: number | null;
  /** A verdict whose behavior is not the one answered (never expected). */
  wrong: boolean;
}

export interface Samples {
  prompts: PromptSample[];
  answers: AnswerSample[];
}

const request = (id: string): PermissionRequest => ({
  request_id: id,
  tool_name: "Bash",
  description: "Run the tests",
  input_preview: "bun test test/e2e/phone-approval.test.ts",
});

const since = (t0: number, t: number | null) => (t === null ? null : t - t0);

/** Waits for the prompt `id` on both platforms, with the chat.db watcher's timer armed meanwhile. */
async function sighted(w: World, id: string, t0: number, disarm: () => void) {
  const [discord, imessage] = await Promise.all(
    PLATFORMS.map((p) => w.sightings.wait(`${p}:${id}`, STUCK_MS)),
  );
  disarm();
  return { discord: since(t0, discord ?? null), imessage: since(t0, imessage ?? null) };
}

type Api = ReturnType<typeof createApiClient>;

/**
 * The owner's channels in the order the relay gets them (its own GET /channels call: one-to-one channels,
 * newest activity first), so the direct sends go out in the same order. Untimed, before t0.
 */
async function sendOrder(w: World, api: Api): Promise<{ order: Platform[]; listMs: number }> {
  const t = performance.now();
  const res = await api.call("GET", "/channels", { query: { person_id: OWNER, limit: 500 } });
  const listMs = performance.now() - t;
  const list = (res.body as { channels: { channel_id: string; channel_type: string }[] }).channels;
  const order = list
    .filter((c) => c.channel_type === "dm")
    .map((c) => PLATFORMS.find((p) => w.channels[p] === c.channel_id))
    .filter((p): p is Platform => p !== undefined);
  if (order.length !== 2) throw new Error(`GET /channels: the owner's chats are ${JSON.stringify(list)}`);
  return { order, listMs };
}

async function relayPrompt(w: World, api: Api, id: string): Promise<PromptSample> {
  const { order, listMs } = await sendOrder(w, api);
  const disarm = w.watcher.arm();
  const t0 = performance.now();
  await w.mcp.client.notification({ method: PERMISSION_REQUEST_METHOD, params: { ...request(id) } });
  const ms = await sighted(w, id, t0, disarm);
  return { id, path: "relay", first: order[0] as Platform, listMs, ms };
}

async function directPrompt(w: World, api: Api, id: string): Promise<PromptSample> {
  const key = (channelId: string) =>
    `bench-direct:${id}:${createHash("sha256").update(channelId).digest("hex").slice(0, 32)}`;
  const text = promptText(request(id));
  const { order, listMs } = await sendOrder(w, api);
  const disarm = w.watcher.arm();
  const t0 = performance.now();
  const sends = order.map((p) =>
    api.call("POST", "/messages/send", {
      body: { channel_id: w.channels[p], text },
      idempotencyKey: key(w.channels[p]),
    }),
  );
  const ms = await sighted(w, id, t0, disarm);
  for (const res of await Promise.all(sends))
    if (!res.ok) progress(`direct send ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return { id, path: "direct", first: order[0] as Platform, listMs, ms };
}

/** The owner writes `text` on `platform`; resolves with the instant the commit (or dispatch) returned. */
function ownerWrites(w: World, platform: Platform, text: string): number {
  if (platform === "discord") w.fake.message(w.ownerDm, { author: w.owner, content: text });
  else w.writer.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text });
  return performance.now();
}

async function verdict(w: World, id: string, platform: Platform, behavior: "allow" | "deny") {
  const t2 = ownerWrites(w, platform, `${behavior === "allow" ? "yes" : "no"} ${id}`);
  const t3 = await w.sightings.wait(`verdict:${id}`, STUCK_MS);
  const got = w.verdicts.get(id);
  const sample: AnswerSample = {
    id,
    path: "verdict",
    platform,
    behavior,
    ms: since(t2, t3),
    wrong: got !== undefined && got !== behavior,
  };
  return sample;
}

async function ordinary(w: World, id: string, platform: Platform): Promise<AnswerSample> {
  const text = `ok ${id}`;
  const t2 = ownerWrites(w, platform, text);
  const t3 = await w.sightings.wait(`push:${text}`, STUCK_MS);
  return { id, path: "ordinary", platform, behavior: null, ms: since(t2, t3), wrong: false };
}

/** Runs `a` and `b` in a seeded random order, a gap before each. */
async function bothInRandomOrder<A, B>(a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]> {
  const aFirst = random() < 0.5;
  await Bun.sleep(gapMs());
  const first = aFirst ? await a() : await b();
  await Bun.sleep(gapMs());
  const second = aFirst ? await b() : await a();
  return (aFirst ? [first, second] : [second, first]) as [A, B];
}

/** One sample: both prompt steps, then both answer steps. */
async function sample(w: World, i: number, ids: string[], api: Api) {
  const [relayId, directId, ordinaryId] = ids as [string, string, string];
  const platform = PLATFORMS[i % 2] as Platform;
  const behavior = Math.floor(i / 2) % 2 === 0 ? "allow" : "deny";
  const prompts = await bothInRandomOrder(
    () => relayPrompt(w, api, relayId),
    () => directPrompt(w, api, directId),
  );
  const answers = await bothInRandomOrder(
    () => verdict(w, relayId, platform, behavior),
    () => ordinary(w, ordinaryId, platform),
  );
  return { prompts, answers };
}

/** Three distinct ids per sample (relayed, direct, ordinary), drawn once for the whole run. */
let ids: string[] | null = null;

/** Samples `from` … `from + count - 1` (the sample index sets the platform, the word and the ids). */
export async function runSamples(w: World, from: number, count: number): Promise<Samples> {
  ids ??= requestIds(3 * (WARMUP + N));
  const api = createApiClient({ baseUrl: w.base, token: TOKEN, agentId: AGENT_ID, fetch });
  const out: Samples = { prompts: [], answers: [] };
  for (let i = from; i < from + count; i++) {
    const s = await sample(w, i, ids.slice(3 * i, 3 * i + 3), api);
    out.prompts.push(...s.prompts);
    out.answers.push(...s.answers);
    const done = i - from + 1;
    if (done % 25 === 0 || done === count) progress(`${done}/${count} samples`);
  }
  return out;
}
