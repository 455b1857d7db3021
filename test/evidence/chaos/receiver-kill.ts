/**
 * kill -9 of `gw receiver` after its 204s, with a run going and jobs queued. gw serve (chat.db only)
 * pushes a friend's messages from two chats to gw receiver, which runs the fake agent
 * (test/fakes/fake-agent.ts). Each round starts a receiver (a new lifetime, on the same journal), posts
 * in each chat a seeded 0–1 message that runs to its end, a `hang-once` message (its agent starts a
 * grandchild that ignores SIGTERM and waits, unless its preamble says an earlier run was interrupted)
 * and 0–2 more behind it, waits until both hanging runs are going and the rest are accepted (queued at
 * /healthz), and kills the receiver
 * with SIGKILL. A last receiver lets everything end and is stopped with SIGTERM. Held when no agent or
 * grandchild is alive ORPHAN_DEADLINE_MS after a kill, and the runs satisfy judgeReceiverRuns
 * (receiver-checks.ts): every accepted message runs after the restart, marked interrupted, in channel
 * order, and none runs twice within one lifetime.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ChatDbWriter, openChatDbWriter } from "../../../src/demo/chatdb-writer.ts";
import { CHECK_CONTEXT } from "../../../src/receiver/agent-command.ts";
import { fakeAgentProgram } from "../../helpers/fake-agent.ts";
import {
  freePort,
  type GwProcess,
  isAlive,
  isolatedEnv,
  spawnGw,
  waitFor,
  waitForHealth,
} from "../../helpers/process.ts";
import { type AgentRun, judgeReceiverRuns, type PostedMessage } from "./receiver-checks.ts";
import type { Rng } from "./rng.ts";
import { CANARY, FRIEND, FRIEND_CHAT } from "./world.ts";

export const ORPHAN_DEADLINE_MS = 2_000;
const GROUP_CHAT = "iMessage;+;chat100000000000000042";
const CHATS = { dm: FRIEND_CHAT, group: GROUP_CHAT } as const;

export interface ReceiverKillResult {
  rounds: number;
  /** Agent and grandchild processes still alive after the deadline. */
  orphans: number;
  /** Messages the receiver accepted (each answered 204 before a kill). */
  accepted: number;
  /** Runs started by a later receiver than the one that accepted the message. */
  rerun: number;
  /** Accepted messages whose run ended. */
  ended: number;
  problems: string[];
}

interface AgentLine {
  event: string;
  pid: number;
  ppid?: number;
  t: number;
  child?: number;
  stdin?: string;
}

function readLines(record: string): AgentLine[] {
  if (!existsSync(record)) return [];
  return readFileSync(record, "utf8")
    .split("\n")
    .slice(0, -1)
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as AgentLine);
}

/** The agent runs of the record, each in the lifetime of the receiver that started it. */
export function runsOf(lines: readonly AgentLine[], receiverPids: readonly number[]): AgentRun[] {
  const endedPids = new Set(lines.filter((l) => l.event === "end").map((l) => l.pid));
  return lines
    .filter((l) => l.event === "start")
    .map((l) => {
      const stdin = l.stdin ?? "";
      const text = (JSON.parse(stdin.slice(stdin.indexOf("{"))) as { text: string }).text;
      return {
        text,
        channel: text.split(" ")[1] ?? "",
        lifetime: receiverPids.indexOf(l.ppid ?? -1),
        t: l.t,
        ended: endedPids.has(l.pid),
        interrupted: stdin.slice(0, stdin.indexOf("{")).includes(CHECK_CONTEXT),
      };
    });
}

function setUp() {
  const dir = mkdtempSync(join(tmpdir(), "gw-chaos-receiver-"));
  const chatPath = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(chatPath), { recursive: true });
  const chat = openChatDbWriter(chatPath);
  chat.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  chat.chat({
    guid: GROUP_CHAT,
    style: 43,
    chatIdentifier: "chat100000000000000042",
    participants: [FRIEND],
  });
  const { bin: agentBin, record } = fakeAgentProgram(dir);
  const servePort = freePort();
  const receiverPort = freePort();
  const serveEnv = isolatedEnv(join(dir, "serve"), {
    GW_BEARER_TOKEN: CANARY.bearer,
    GW_BIND_PORT: String(servePort),
    GW_CHAT_DB_PATH: chatPath,
    GW_DEVICE_POLL_INTERVAL_MS: "50",
    GW_LOG_STDERR_LEVEL: "warn",
    GW_WEBHOOK_URL: `http://127.0.0.1:${receiverPort}/webhook`,
    GW_WEBHOOK_SECRET: CANARY.webhookSecret,
    GW_WEBHOOK_RETRY_DELAYS_MS: "50,50,50,50",
  });
  mkdirSync(join(dir, "serve"), { recursive: true });
  writeFileSync(
    serveEnv.GW_ALLOWLIST_PATH as string,
    `[[entry]]\nsource = "device_messenger"\nid = "${FRIEND}"\nperson_id = "ann"\n`,
  );
  const receiverEnv = {
    HOME: join(dir, "receiver"),
    GW_BEARER_TOKEN: CANARY.bearer,
    GW_WEBHOOK_SECRET: CANARY.webhookSecret,
    GW_LOG_DIR: join(dir, "receiver/logs"),
    GW_LOG_STDERR_LEVEL: "warn",
    GW_RECEIVER_BIND_PORT: String(receiverPort),
    GW_RECEIVER_AGENT_BIN: agentBin,
    GW_BASE_URL: `http://127.0.0.1:${servePort}`,
  };
  return { dir, chat, record, servePort, receiverPort, serveEnv, receiverEnv };
}

/** Posts one round's messages: per chat 0–1 that runs to its end, a hanging one, and 0–2 behind it. */
function postRound(chat: ChatDbWriter, rng: Rng, round: number, lifetime: number): PostedMessage[] {
  const posted: PostedMessage[] = [];
  for (const [tag, guid] of Object.entries(CHATS)) {
    const texts = rng.chance(0.5) ? [`r${round} ${tag} done`] : [];
    texts.push(`r${round} ${tag} hang-once`);
    for (let i = rng.int(0, 2); i > 0; i--) texts.push(`r${round} ${tag} q${texts.length}`);
    for (const text of texts) {
      chat.message({ chatGuid: guid, from: FRIEND, text });
      posted.push({ text, channel: tag, lifetime });
    }
  }
  return posted;
}

export async function receiverKill(rounds: number, rng: Rng): Promise<ReceiverKillResult> {
  const s = setUp();
  const procs: GwProcess[] = [];
  const receiverPids: number[] = [];
  const posted: PostedMessage[] = [];
  const leftovers: number[] = [];
  const result: ReceiverKillResult = { rounds: 0, orphans: 0, accepted: 0, rerun: 0, ended: 0, problems: [] };
  const startReceiver = async () => {
    const p = spawnGw(["receiver"], s.receiverEnv);
    procs.push(p);
    receiverPids.push(p.proc.pid);
    await waitForHealth(s.receiverPort);
    return p;
  };
  try {
    const serve = spawnGw(["serve"], s.serveEnv);
    procs.push(serve);
    await waitFor(async () => {
      const h = (await waitForHealth(s.servePort)) as { connectors: { device_messenger: { state: string } } };
      return h.connectors.device_messenger.state === "ok" ? true : undefined;
    }, "gw serve reading chat.db");
    for (let round = 1; round <= rounds; round++) {
      const receiver = await startReceiver();
      const lifetime = receiverPids.length - 1;
      const mine = postRound(s.chat, rng, round, lifetime);
      posted.push(...mine);
      const hanging = await waitForRound(s, mine, receiver.proc.pid);
      leftovers.push(...hanging);
      receiver.proc.kill("SIGKILL");
      await receiver.exited;
      result.rounds += 1;
      const gone = await waitFor(
        () => (hanging.every((p) => !isAlive(p)) ? true : undefined),
        "the agents' process groups to die with the receiver",
        ORPHAN_DEADLINE_MS,
      ).catch(() => false);
      if (!gone) {
        const alive = hanging.filter(isAlive);
        result.orphans += alive.length;
        result.problems.push(`round ${round}: ${alive.length} agent process(es) outlived the receiver`);
      }
    }
    const last = await startReceiver();
    await waitFor(
      () => {
        const ended = runsOf(readLines(s.record), receiverPids).filter((r) => r.ended).length;
        return ended >= posted.length ? true : undefined;
      },
      "every accepted message to run to its end after the last restart",
      30_000,
    ).catch(() => undefined);
    last.proc.kill("SIGTERM");
    const code = await last.exited;
    if (code !== 0) result.problems.push(`the last receiver exited ${code} on SIGTERM`);
    const v = judgeReceiverRuns(posted, runsOf(readLines(s.record), receiverPids), receiverPids.length);
    Object.assign(result, { accepted: v.accepted, rerun: v.rerun, ended: v.ended });
    result.problems.push(...v.problems);
  } finally {
    for (const p of procs) {
      p.proc.kill("SIGKILL");
      await p.exited;
    }
    for (const pid of leftovers)
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    s.chat.close();
    rmSync(s.dir, { recursive: true, force: true });
  }
  return result;
}

/**
 * Waits until this round's two hanging runs are going in this receiver (their grandchildren started)
 * and the rest of its messages are accepted and queued; returns the hanging pids (agents, grandchildren).
 */
async function waitForRound(
  s: ReturnType<typeof setUp>,
  mine: readonly PostedMessage[],
  receiverPid: number,
): Promise<number[]> {
  const hangs = mine.filter((m) => m.text.endsWith("hang-once")).map((m) => m.text);
  const queued = mine.filter((m) => / q\d+$/.test(m.text)).length;
  return waitFor(
    async () => {
      const lines = readLines(s.record);
      const starts = lines.filter(
        (l) =>
          l.event === "start" && l.ppid === receiverPid && hangs.some((h) => l.stdin?.includes(`"${h}"`)),
      );
      const grandchildren = lines.filter(
        (l) => l.event === "grandchild" && starts.some((x) => x.pid === l.pid),
      );
      if (grandchildren.length < hangs.length) return undefined;
      const h = (await waitForHealth(s.receiverPort)) as { queued: number };
      if (h.queued !== queued) return undefined;
      return grandchildren.flatMap((g) => [g.pid, g.child as number]);
    },
    "both hanging runs going and the other messages queued",
    20_000,
  );
}
