/**
 * The world a chaos run kills gw serve in (scenario setup). Everything that must outlive a kill lives
 * here, in the runner's process: a chat.db written as Messages writes it (a friend on the allowlist, a
 * stranger who is not), the fake Discord (Ann allowlisted under the same person, a stranger) that gw's
 * real discord.js connector logs in to, the Messages stand-in used as GW_OSASCRIPT_PATH, and the
 * signature-checking webhook sink. `start` runs `gw serve` (from source, or the compiled binary) on
 * the same files and port every time. Secrets are canaries, so logs can be searched for them.
 * Only test/helpers/process.ts is used from the test helpers (the others register bun:test hooks, and
 * `bun run chaos` runs outside the test runner).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type ChatDbWriter, openChatDbWriter } from "../../../src/demo/chatdb-writer.ts";
import { type FakeDiscord, type FakeUser, startFakeDiscord } from "../../../src/demo/fake-discord/server.ts";
import { allowAnn } from "../../helpers/allowlist.ts";
import { freePort, type GwProcess, isolatedEnv, spawnGw, standInProgram } from "../../helpers/process.ts";
import { type ChaosSink, chaosSink } from "./sink.ts";

export const FRIEND = "+15555550100";
export const STRANGER = "+15555550199";
export const FRIEND_CHAT = `any;-;${FRIEND}`;
export const STRANGER_CHAT = `any;-;${STRANGER}`;

export const CANARY = {
  bearer: "chaos-canary-bearer-5f1d0c2a9e7b4c38",
  webhookSecret: "chaos-canary-webhook-secret-7a3e91d2",
  botToken: "chaos-canary-bot-token-c4b8e0f1",
};

export interface World {
  dir: string;
  env: Record<string, string>;
  port: number;
  base: string;
  chat: { path: string; writer: ChatDbWriter };
  fake: FakeDiscord;
  discord: { ann: FakeUser; stranger: FakeUser; channelId: string };
  sink: ChaosSink;
  /** Every gw serve started, in order (their output is kept for the canary check). */
  runs: GwProcess[];
  start(opts?: { binary?: boolean }): GwProcess;
  /** Stops whatever still runs and removes the folder. */
  close(): Promise<void>;
}

function chatDbIn(dir: string) {
  const path = join(dir, "Library/Messages/chat.db");
  mkdirSync(dirname(path), { recursive: true });
  const writer = openChatDbWriter(path);
  writer.chat({ guid: FRIEND_CHAT, style: 45, chatIdentifier: FRIEND, participants: [FRIEND] });
  writer.chat({ guid: STRANGER_CHAT, style: 45, chatIdentifier: STRANGER, participants: [STRANGER] });
  return { path, writer };
}

export async function createWorld(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), "gw-chaos-"));
  const fake = await startFakeDiscord({ token: CANARY.botToken });
  const ann = fake.user({ username: "ann_user", global_name: "Ann" });
  const stranger = fake.user({ username: "stranger_user", global_name: "Stranger" });
  const guild = fake.guild({ name: "Home" });
  const general = fake.channel(guild.id, { name: "general" });
  const sink = chaosSink(CANARY.webhookSecret);
  const chat = chatDbIn(dir);
  const port = freePort();
  const env = isolatedEnv(dir, {
    GW_BEARER_TOKEN: CANARY.bearer,
    GW_BIND_PORT: String(port),
    GW_LOG_STDERR_LEVEL: "warn",
    GW_CHAT_DB_PATH: chat.path,
    GW_DEVICE_POLL_INTERVAL_MS: "50",
    GW_OSASCRIPT_PATH: standInProgram(dir),
    GW_STANDIN_CHAT_DB: chat.path,
    GW_STANDIN_LOG: join(dir, "standin.log"),
    GW_COMMUNITY_BOT_TOKEN: CANARY.botToken,
    GW_COMMUNITY_API_URL: fake.apiUrl,
    // A run of start-up kills can leave a long backlog; catch-up must fetch all of it.
    GW_COMMUNITY_CATCHUP_MAX_MESSAGES: "100000",
    GW_WEBHOOK_URL: sink.url,
    GW_WEBHOOK_SECRET: CANARY.webhookSecret,
    GW_WEBHOOK_RETRY_DELAYS_MS: "20,40,60,80",
    GW_WEBHOOK_TIMEOUT_MS: "2000",
    GW_RATE_LIMIT_PER_CHANNEL_RPS: "1000",
    GW_RATE_LIMIT_BURST: "1000",
  });
  writeFileSync(env.GW_ALLOWLIST_PATH as string, allowAnn(ann.id));
  const runs: GwProcess[] = [];
  return {
    dir,
    env,
    port,
    base: `http://127.0.0.1:${port}`,
    chat,
    fake,
    discord: { ann, stranger, channelId: general.id },
    sink,
    runs,
    start(opts = {}) {
      const gw = spawnGw(["serve"], env, opts);
      runs.push(gw);
      return gw;
    },
    async close() {
      for (const r of runs) {
        if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill("SIGKILL");
        await r.exited;
      }
      chat.writer.close();
      sink.stop();
      await fake.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
