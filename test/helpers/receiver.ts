/**
 * The webhook receiver built as `gw receiver` builds it (createReceiver with the real spawner), with the
 * fake agent (test/fakes/fake-agent.ts) as GW_RECEIVER_AGENT_BIN, driven through its fetch handler with
 * deliveries signed exactly as gw serve signs them, over a real journal in its folder (reuse the folder
 * to restart on the same journal). Call it inside a test: it stops when the test ends. `hangingAndQueued`
 * is what the restart tests (in process and as a process) deliver before they stop the receiver.
 */
import { afterAll } from "bun:test";
import { join } from "node:path";
import { formatProblems, loadConfig } from "../../src/config/load.ts";
import type { Envelope } from "../../src/core/envelope.ts";
import { systemClock } from "../../src/core/ports.ts";
import { bunSpawner } from "../../src/core/spawn.ts";
import { createReceiver } from "../../src/receiver/receiver.ts";
import { openReceiverJournal } from "../../src/store/receiver-journal.ts";
import { signedHeaders } from "../../src/webhooks/sign.ts";
import { envelopeOf } from "./envelope.ts";
import { fakeAgentProgram } from "./fake-agent.ts";
import { recordingLogger } from "./logger.ts";
import { ROOT } from "./process.ts";
import { TOKEN } from "./service.ts";
import { tempDir } from "./temp.ts";

export const SECRET = "receiver-test-secret-0123456789";

export { type AgentRecord, fakeAgentProgram } from "./fake-agent.ts";
export { envelopeOf };

export function receiverUnderTest(
  opts: {
    env?: Record<string, string>;
    killGraceMs?: number;
    /** Another receiver's folder: the same journal, prompt and agent record (a restart). */
    dir?: string;
    /** Leave `start` (the journal's recovery) to the test. */
    noStart?: boolean;
  } = {},
) {
  const dir = opts.dir ?? tempDir();
  const agent = fakeAgentProgram(dir);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    GW_BEARER_TOKEN: TOKEN,
    GW_WEBHOOK_SECRET: SECRET,
    GW_LOG_DIR: join(dir, "logs"),
    GW_RECEIVER_AGENT_BIN: agent.bin,
    GW_RECEIVER_AGENT_PROMPT_FILE: join(dir, "prompt.md"),
    ...opts.env,
  };
  const host = { platform: process.platform, homeDir: dir, cwd: dir };
  const loaded = loadConfig(env, host, ["bearerToken", "webhookSecret"]);
  if (!loaded.ok) throw new Error(formatProblems(loaded.problems));
  const log = recordingLogger();
  const journal = openReceiverJournal(loaded.config.receiverDbPath);
  const receiver = createReceiver({
    config: loaded.config,
    env,
    self: [process.execPath, join(ROOT, "src/main.ts")],
    tmpDir: dir,
    clock: systemClock,
    log,
    spawner: bunSpawner,
    journal,
    killGraceMs: opts.killGraceMs ?? 300,
  });
  if (!opts.noStart) receiver.start();
  let closed: Promise<void> | null = null;
  /** Stops the receiver within `graceMs` (as SIGTERM does) and closes its journal; once. */
  const stop = (graceMs = 0) => {
    closed ??= receiver.stop(graceMs).then(() => journal.close());
    return closed;
  };
  afterAll(() => stop(0));

  /** POSTs an envelope as gw serve does (or with the given changes to its headers). */
  const deliver = (
    envelope: Envelope | string,
    o: {
      deliveryId?: string;
      timestampS?: number;
      secret?: string;
      headers?: Record<string, string | null>;
    } = {},
  ) => {
    const body = typeof envelope === "string" ? envelope : JSON.stringify(envelope);
    const deliveryId = o.deliveryId ?? crypto.randomUUID();
    const signed: Record<string, string> = {
      ...signedHeaders(o.secret ?? SECRET, deliveryId, o.timestampS ?? Math.floor(Date.now() / 1000), body),
    };
    for (const [k, v] of Object.entries(o.headers ?? {})) {
      if (v === null) delete signed[k];
      else signed[k] = v;
    }
    return receiver.fetch(new Request("http://localhost/webhook", { method: "POST", headers: signed, body }));
  };
  const health = async () =>
    (await (await receiver.fetch(new Request("http://localhost/healthz"))).json()) as {
      status: string;
      workers: number;
      running: number;
      queued: number;
    };
  return { dir, env, log, receiver, journal, stop, agent, deliver, health, config: loaded.config };
}

/** The two channels of the restart tests. */
export const RESTART_CHANNELS = {
  A: "community_chat:channel:1300000000000000001",
  B: "community_chat:channel:1300000000000000002",
};

/**
 * What the restart tests deliver, in this order: a run that hangs at the head of each channel and jobs
 * queued behind it ([channel, text]), each with a fresh delivery id (`ids`, by text).
 */
export function hangingAndQueued() {
  const { A, B } = RESTART_CHANNELS;
  const sent = [
    [A, "hang-once a1"],
    [A, "a2"],
    [B, "hang-once b1"],
    [A, "a3"],
    [B, "b2"],
  ] as const;
  const ids = new Map<string, string>(sent.map(([, text]) => [text, crypto.randomUUID()]));
  return { sent, ids };
}
