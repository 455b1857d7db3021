/**
 * kill -9 of `gw receiver` in the middle of an agent run. gw serve (chat.db only) pushes the friend's
 * message to gw receiver, which runs the fake agent (test/fakes/fake-agent.ts); the agent starts a
 * grandchild that ignores SIGTERM and waits. Then the receiver is killed with SIGKILL. Held when:
 * neither the agent nor its grandchild is alive ORPHAN_DEADLINE_MS later (the run's process group
 * died with the receiver), and the lost run's message is still unread at the service for the
 * receiver's agent id. Each kill is followed by a new receiver for the next round.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { openChatDbWriter } from "../../../src/demo/chatdb-writer.ts";
import {
  freePort,
  type GwProcess,
  isAlive,
  isolatedEnv,
  ROOT,
  spawnGw,
  waitFor,
  waitForHealth,
} from "../../helpers/process.ts";
import { CANARY, FRIEND, FRIEND_CHAT } from "./world.ts";

export const ORPHAN_DEADLINE_MS = 2_000;

export interface ReceiverKillResult {
  rounds: number;
  /** Agent and grandchild processes still alive after the deadline. */
  orphans: number;
  /** Lost runs whose message was still unread at the service. */
  stillUnread: number;
  problems: string[];
}

interface AgentLine {
  event: string;
  pid: number;
  child?: number;
  stdin?: string;
}

export async function receiverKill(rounds: number): Promise<ReceiverKillResult> {
  const dir = mkdtempSync(join(tmpdir(), "gw-chaos-receiver-"));
  const chatPath = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(chatPath), { recursive: true });
  const chat = openChatDbWriter(chatPath);
  chat.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  const record = join(dir, "agent-record.jsonl");
  const agentBin = join(dir, "agent");
  writeFileSync(
    agentBin,
    `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, "test/fakes/fake-agent.ts")}' '${record}' "$@"\n`,
  );
  chmodSync(agentBin, 0o755);
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
  const lines = (): AgentLine[] =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => JSON.parse(l) as AgentLine)
      : [];
  const unread = async (): Promise<string[]> => {
    const res = await fetch(`http://127.0.0.1:${servePort}/messages/unread?limit=100`, {
      headers: { authorization: `Bearer ${CANARY.bearer}`, "x-agent-id": "gw-receiver" },
    });
    return ((await res.json()) as { messages: { id: string }[] }).messages.map((m) => m.id);
  };

  const procs: GwProcess[] = [];
  const leftovers: number[] = [];
  const result: ReceiverKillResult = { rounds: 0, orphans: 0, stillUnread: 0, problems: [] };
  try {
    const serve = spawnGw(["serve"], serveEnv);
    procs.push(serve);
    await waitFor(async () => {
      const h = (await waitForHealth(servePort)) as { connectors: { device_messenger: { state: string } } };
      return h.connectors.device_messenger.state === "ok" ? true : undefined;
    }, "gw serve reading chat.db");
    for (let round = 1; round <= rounds; round++) {
      const receiver = spawnGw(["receiver"], receiverEnv);
      procs.push(receiver);
      await waitForHealth(receiverPort);
      const seen = lines().length;
      chat.message({ chatGuid: FRIEND_CHAT, from: FRIEND, text: `grandchild round ${round}` });
      const grandchild = await waitFor(
        () =>
          lines()
            .slice(seen)
            .find((l) => l.event === "grandchild"),
        "the agent to start its grandchild",
        15_000,
      );
      const start = lines()
        .slice(seen)
        .find((l) => l.event === "start" && l.pid === grandchild.pid) as AgentLine;
      const stdin = start.stdin ?? "";
      const messageId = (JSON.parse(stdin.slice(stdin.indexOf("{"))) as { id: string }).id;
      const pids = [start.pid, grandchild.child as number];
      leftovers.push(...pids);
      receiver.proc.kill("SIGKILL");
      await receiver.exited;
      result.rounds += 1;
      const gone = await waitFor(
        () => (pids.every((p) => !isAlive(p)) ? true : undefined),
        "the agent's process group to die with the receiver",
        ORPHAN_DEADLINE_MS,
      ).catch(() => false);
      if (!gone) {
        const alive = pids.filter(isAlive);
        result.orphans += alive.length;
        result.problems.push(`round ${round}: ${alive.length} agent process(es) outlived the receiver`);
      }
      if ((await unread()).includes(messageId)) result.stillUnread += 1;
      else result.problems.push(`round ${round}: the lost run's message ${messageId} is not unread`);
    }
  } finally {
    for (const p of procs) {
      p.proc.kill("SIGKILL");
      await p.exited;
    }
    for (const pid of leftovers)
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    chat.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}
